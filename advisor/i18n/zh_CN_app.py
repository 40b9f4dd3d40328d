"""Simplified Chinese for the strings added by the "app answers first" work (issue 15): the method line,
the verdict, validation and the new controls. Kept apart from zh_CN.py so parallel edits merge cleanly."""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    "Simulating {file}": "正在模拟 {file}",
    "Method: simulated (one real PyTorch step of the file, on the meta device, as the command line does)":
        "方法：模拟（在 meta 设备上运行该文件真实的一步 PyTorch 计算，与命令行相同）",
    "Method: analytic for now; simulating the PyTorch file (the command line's method)…":
        "方法：暂为解析估算；正在模拟该 PyTorch 文件（命令行所用的方法）…",
    "Method: analytic, because the imported graph was edited (the simulation runs the file as written)":
        "方法：解析估算，因为导入的网络已被修改（模拟只能运行文件原样的模型）",
    "Method: analytic (layer formulas over the graph)": "方法：解析估算（按层公式计算网络图）",
    "a name": "名称",
    "memory above 0 GiB": "大于 0 GiB 的显存",
    "bandwidth above 0 GB/s": "大于 0 GB/s 的带宽",
    "an FP32 rate above 0": "大于 0 的 FP32 算力",
    "a TDP above 0 W": "大于 0 W 的 TDP",
    "The card needs {what}.": "这张卡还需要填写：{what}。",
    "Remove card": "删除显卡",
    "Delete the selected card; only cards you added or edited": "删除所选显卡；仅限你添加或修改过的显卡",
    "Removing the card": "正在删除显卡",
    "Card not removed": "显卡未删除",
    "incomplete": "数据不全",
    "<b>No card fits.</b> The roomiest, {card}, is {short} short: lower the batch, turn on gradient "
    "checkpointing or mixed precision, or shard over more cards (Recommendations, Make it fit).":
        "<b>没有能放下的显卡。</b>显存最大的 {card} 还差 {short}：请减小批大小、开启梯度检查点或混合精度，"
        "或在更多显卡上分片（见“推荐”中的“让它放得下”）。",
    "<b>{fits}</b> of {total} cards fit": "{total} 种显卡中 <b>{fits}</b> 种放得下",
    "Card in the catalog, and how many of it when more than one": "目录中的显卡；多于一张时注明张数",
    "Choose which columns the table shows": "选择表格显示哪些列",
    "Columns…": "列…",
    "Needs <b>{need}</b> on a single card ({mode}, batch {batch}, {method})":
        "单卡需要 <b>{need}</b>（{mode}，批大小 {batch}，{method}）",
    "No card in the catalog can be ranked.": "目录中没有可以排名的显卡。",
    "<b>No card runs this workload.</b> {reason}": "<b>没有显卡能运行此工作负载。</b>{reason}",
    "{reason}; no change below makes it run on this card.": "{reason}；下面的改动都不能让它在这块卡上运行。",
    "No estimate yet: pick or build a model.": "尚无估算：请选择或搭建一个模型。",
    "Per $1k": "每千美元",
    "Software": "软件栈",
    "How PyTorch runs the card: CUDA (NVIDIA), ROCm (AMD), XPU (Intel Arc), Gaudi (Intel Gaudi, through its own "
    "PyTorch bridge)": "PyTorch 如何运行这块卡：CUDA（NVIDIA）、ROCm（AMD）、XPU（Intel Arc）、Gaudi（Intel Gaudi，"
                       "经其自己的 PyTorch 桥接）",
    "Per watt": "每瓦",
    "Throughput per 1,000 USD of the price: value for money": "每 1000 美元价格的吞吐量：性价比",
    "best value: <b>{choice}</b> ({value})": "性价比最高：<b>{choice}</b>（{value}）",
    "fastest: <b>{choice}</b> ({speed} {unit})": "最快：<b>{choice}</b>（{speed} {unit}）",
    "ranking the cards…": "正在为显卡排名…",
    "{value} {unit} per $1k": "每千美元 {value} {unit}",
    "analytic": "解析估算",
    "simulated": "模拟",
    "(The figures below are from the last valid network.)": "（下方数字来自上一次有效的网络。）",
    "(not a zoo model)": "（非模型库模型）",  # the full phrase was cut in the chooser at 1280 px
    "This model's activations already work in place": "该模型的激活函数已是原地计算",
    "best value (speed per dollar)": "性价比最高（每美元的速度）",
    "cheapest that fits": "放得下的最便宜",
    "fits with {share} to spare": "放得下，还剩 {share} 余量",
    "Changes that make it faster": "能让它更快的改动",
    "Changes that free memory for a larger batch": "能腾出显存以增大批大小的改动",
    "To see live readings here: an NVIDIA GPU with its driver installed (nvidia-smi should list it; "
    "on Linux the distribution's nvidia-driver package, on Windows the driver from nvidia.com). The "
    "app reads it through NVML, which comes with the driver and the nvidia-ml-py package advisor "
    "installs. Without a GPU, the other tabs work in full.":
        "要在这里看到实时读数：需要一块装好驱动的 NVIDIA GPU（nvidia-smi 应能列出它；Linux 上安装发行版的 "
        "nvidia-driver 软件包，Windows 上安装 nvidia.com 的驱动）。本程序通过 NVML 读取，NVML 随驱动提供，"
        "advisor 已安装 nvidia-ml-py 软件包。没有 GPU 时，其他标签页功能完整。",
    "The catalog is as it was.": "目录保持原样，没有改动。",
    "Loaded {name}; Undo brings back the previous model": "已载入 {name}；撤销可恢复之前的模型",
    "A small test network the H200 calibration measured (shared/calibration): compare the estimate with real "
    "readings": "H200 校准实测过的小型测试网络（shared/calibration）：可用来把估算与真实读数对比",
    "Search: name, family, size (8b, <10b, moe)": "搜索：名称、系列、规模（8b、<10b、moe）",
    "<b>Out of date:</b> the figures below are {model}'s, the last network that could be estimated; the error "
    "above says what to fix.": "<b>已过时：</b>下方数字属于 {model}，即上一个能估算的网络；请按上方错误提示修改。",
    "ranking cancelled: change a filter to rank again": "排名已取消：改动任一筛选条件即可重新排名",
    "Method: analytic; the simulation of the PyTorch file was cancelled (change the workload or open the file "
    "again to simulate)": "方法：解析（PyTorch 文件的模拟已取消；改动工作负载或重新打开文件即可再模拟）",
    "Trust {file}?": "信任 {file}？",
    "{file} holds pickled Python objects or code, which run when the file is loaded: they can do anything you "
    "can. Open it only if you trust where it came from.":
        "{file} 含有 pickle 序列化的 Python 对象或代码，载入时会运行，能做你能做的任何事。"
        "只有在你信任它的来源时才打开。",
    "Trust this file and open it": "信任此文件并打开",
    "same as the kernel": "与核大小相同",
    "Bytes of each layer's output (inference keeps nothing for backward)":
        "各层输出的字节数（推理不为反向传播保留任何张量）",
    "{value} {unit} per $1/h of rent": "每 1 美元/小时租金 {value} {unit}",
    "price over a year old": "价格已超过一年",
    # the catalog's link names with English words in them (recommend/devices.link), as the reasons name them
    "Infinity Fabric (3 links)": "Infinity Fabric（3 条链路）",
    "Infinity Fabric (6 links)": "Infinity Fabric（6 条链路）",
    "Infinity Fabric (7 links)": "Infinity Fabric（7 条链路）",
    "Infinity Fabric (8 links)": "Infinity Fabric（8 条链路）",
    "Infinity Fabric Link (2 links)": "Infinity Fabric Link（2 条链路）",
    "NVLink 2 bridge (2 bridges)": "NVLink 2 桥接器（2 个）", "NVLink 2 bridge (2x8)": "NVLink 2 桥接器（2x8）",
    "NVLink 2 bridge (x8)": "NVLink 2 桥接器（x8）", "NVLink 3 (8 links)": "NVLink 3（8 条链路）",
    "NVLink 3 bridge": "NVLink 3 桥接器", "NVLink 4 (8 links)": "NVLink 4（8 条链路）",
    "NVLink 4 bridge": "NVLink 4 桥接器",
    "PCIe 3.0 x16 (SLI bridge carries no compute data)": "PCIe 3.0 x16（SLI 桥不传输计算数据）",
    # the budget box with rent and no job size
    "(renting: give a job size to cap its cost)": "（租用：填写任务规模后才能限制其费用）",
    "A rent per hour has no total to cap: give the job's size (samples) and the budget caps the job's cost":
        "按小时租金没有可限制的总额：填写任务规模（样本数）后，预算才会限制整个任务的费用",
}
