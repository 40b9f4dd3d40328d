"""Simplified Chinese (zh_CN). Keys are the English strings of the app and the charts; values keep the same
{placeholders}. Terms follow common PyTorch/GPU usage in Chinese (显存, 批大小, 激活值, 梯度检查点)."""

# Engine vocabulary that the app translates at run time (categories, phases, segments, objectives...).
DYNAMIC: tuple[str, ...] = (
    "weights", "gradients", "optimizer_state", "activations", "temporaries", "inputs",
    "forward", "backward", "recompute", "optimizer step", "end", "setup",
    # generation peaks at a runtime's setup (core/llm/generate.py): llama.cpp's context, vLLM's engine
    "context created", "engine started",
    "consumer", "workstation", "datacenter", "new", "used", "refurbished",
    # the ranking objectives' names (recommend/objectives.py Objective.label)
    "best value (speed per dollar)", "cheapest that fits", "fastest", "samples/s", "tokens/s", "train", "infer",
)

MESSAGES: dict[str, str] = {
    # engine vocabulary
    "weights": "权重", "gradients": "梯度", "optimizer_state": "优化器状态", "activations": "激活值",
    "temporaries": "临时张量", "inputs": "输入",
    "forward": "前向", "backward": "反向", "recompute": "重计算", "optimizer step": "优化器更新",
    "end": "结束", "setup": "准备", "context created": "创建上下文", "engine started": "引擎启动",
    "consumer": "消费级", "workstation": "工作站", "datacenter": "数据中心", "new": "全新", "used": "二手",
    "refurbished": "翻新",
    # price history chart (advisor/charts/prices.py)
    "No prices in USD yet": "尚无美元价格", "Price history: {card}": "价格走势：{card}",
    "used or refurbished": "二手或翻新", "Price (USD)": "价格（美元）", "rent per GPU-hour": "每 GPU 小时租金",
    "Rent (USD/GPU-hour)": "租金（美元/GPU·时）",
    # money in the recommendations (advisor/ui/money_text.py)
    "no price: set one": "无价格：请设置", "{price}/h": "{price}/小时", "(old)": "（旧）",
    "PyTorch runs this card through {software}.": "PyTorch 通过 {software} 运行这块卡。",
    "No price on this basis: add one in the Catalog tab (or `advisor catalog import-prices`).":
        "此计价方式下没有价格：请在“显卡目录”页添加（或使用 `advisor catalog import-prices`）。",
    "Rent {price} USD per hour for all cards ({date}, {source}).":
        "全部显卡租金每小时 {price} 美元（{date}，{source}）。",
    "This price is over a year old.": "此价格已超过一年。",
    "The whole job: {hours} h, {cost} USD.": "整个任务：{hours} 小时，{cost} 美元。",
    "Buying beats renting the same cards after {hours} h.": "使用超过 {hours} 小时后，购买比租用同样的显卡更划算。",
    "new price": "全新价格", "used price": "二手价格", "lowest purchase price": "最低购买价",
    "Which price the money objectives rank on": "按哪种价格计算性价比与成本",
    "any software": "任意软件栈",
    "no job size": "未给任务规模", "samples": "个样本",
    "{amount} USD per hour": "每小时 {amount} 美元",
    "Samples in the whole job: adds its hours, its cost and when buying beats renting, and the time-against-cost "
    "chart": "整个任务的样本数：给出所需小时数、成本、购买何时比租用划算，以及时间-成本图",
    "Give the job's size to see its time and cost": "给出任务规模即可查看时间与成本",
    "fitting configurations": "放得下的配置", "best choices": "最佳选择",
    "Hours to finish the job": "完成任务所需小时数", "Cost of the job (USD)": "任务成本（美元）",
    "The cost of the job": "整个任务的成本", "{n} samples": "{n} 个样本", "{n} tokens": "{n} 个词元",
    "Job hours": "任务小时数", "Job USD": "任务成本（美元）",
    "Buying beats renting after (h)": "购买比租用划算（小时后）",
    "The whole job ({size}) on every fitting configuration with a price: renting costs hours x rent x cards; "
    "buying costs the cards plus their board power x hours x {kwh} USD/kWh. On the line, the best choices: "
    "nothing else is both faster and cheaper.":
        "整个任务（{size}）在每个放得下且有价格的配置上的时间与成本：租用成本 = 小时数 × 租金 × 卡数；购买成本 = "
        "显卡价格 + 板卡功耗 × 小时数 × {kwh} 美元/千瓦时。折线上是最佳选择：没有别的配置既更快又更便宜。",
    "Only cards PyTorch runs through this software path": "只看 PyTorch 通过该软件栈运行的显卡",
    "best value (speed per dollar)": "性价比优先", "cheapest that fits": "价格最低", "fastest": "速度最快",
    "samples/s": "样本/秒", "tokens/s": "词元/秒", "train": "训练", "infer": "推理",
    "kv_cache": "KV 缓存", "generate": "生成", "prefill": "预填充", "decode": "解码",
    # window, menus
    "Advisor: which GPU for your network": "Advisor：为你的网络挑选 GPU",
    "Workload": "工作负载", "Breakdown": "明细", "Recommendations": "推荐", "Catalog": "显卡目录",
    "Live GPUs": "实时 GPU",
    "&File": "文件(&F)", "&Edit": "编辑(&E)", "&View": "视图(&V)", "&Language": "语言(&L)", "&Help": "帮助(&H)",
    "New network": "新建网络", "Open model…": "打开模型…", "Save network as…": "网络另存为…", "Quit": "退出",
    "Undo": "撤销", "Redo": "重做", "Refresh recommendations": "刷新推荐",
    "About Advisor": "关于 Advisor",
    "Advisor tells you whether your network fits a GPU, how fast it will run, and which card gives the most "
    "for the money.": "Advisor 告诉你：网络能否放进某块 GPU、训练有多快，以及哪块卡最划算。",
    "Open a model": "打开模型", "Save the network": "保存网络", "Model files": "模型文件", "Network": "网络",
    "Cancel": "取消",
    # dialogs and messages
    "Nothing was changed; your network and settings are as they were.": "没有做任何更改；你的网络和设置保持原样。",
    "Cannot save the network": "无法保存网络", "Cannot open the catalog": "无法打开显卡目录",
    "Importing {file}": "正在导入 {file}", "The network has no layers.": "网络中还没有层。",
    "Saved {file}": "已保存 {file}", "Cannot open {file}": "无法打开 {file}",
    "Cannot build the model": "无法构建模型", "Ranking failed": "排名失败",
    # model area and builder
    "Zoo:": "模型库：", "Load": "载入", "Built-in architectures, built layer by layer": "内置网络结构，逐层搭建",
    "Replace the network with this model (undo brings yours back)": "用此模型替换当前网络（撤销可恢复原网络）",
    "Model: {name} ({n} layers)": "模型：{name}（{n} 层）", "from {source}": "来自 {source}",
    "Layer kinds of the estimator": "估算器支持的层类型",
    "Add": "添加", "Remove": "删除", "Up": "上移", "Down": "下移",
    "Add a layer of this kind below the selected one": "在选中层下方添加此类型的层",
    "Remove the selected layer": "删除选中的层", "Move the selected layer up": "将选中的层上移",
    "Move the selected layer down": "将选中的层下移",
    "Layer": "层", "Kind": "类型", "Output shape": "输出形状", "Problem": "问题",
    "Output shape of one sample (the batch dimension left out), inferred from the layers above":
        "单个样本的输出形状（不含批维度），由上方各层推断得出",
    "Add layer": "添加层", "Remove layer": "删除层", "Move layer": "移动层", "Rename layer": "重命名层",
    "Edit inputs": "编辑输入", "Edit {field}": "编辑 {field}", "Load {model}": "载入 {model}",
    "Name": "名称", "Inputs": "输入",
    "Names of earlier layers, comma separated; empty: the layer above":
        "前面各层的名称，用逗号分隔；留空表示上一层",
    "Select a layer to edit its fields.": "选择一层以编辑其参数。", "Layer kind: {kind}": "层类型：{kind}",
    # workload
    "Mode": "模式", "Batch": "批大小", "Sequence length": "序列长度", "Precision": "精度", "Optimizer": "优化器",
    "Training step": "训练步", "Inference": "推理",
    "AMP bf16": "AMP 混合精度 bf16", "AMP fp16": "AMP 混合精度 fp16", "pure bf16": "纯 bf16", "pure fp16": "纯 fp16",
    "SGD with momentum": "带动量的 SGD",
    "Gradient checkpointing": "梯度检查点", "In-place activations": "原地激活函数",
    "Training keeps activations, gradients and optimizer state; inference only the forward pass":
        "训练需保存激活值、梯度和优化器状态；推理只做前向计算",
    "Samples per step on one card; the breakdown follows as you drag": "单卡每步的样本数；拖动时明细随之更新",
    "Tokens per sample for sequence models of the zoo": "模型库中序列模型每个样本的词元数",
    "AMP keeps fp32 weights and computes matmuls in half precision": "AMP 保留 fp32 权重，矩阵乘法以半精度计算",
    "Adam keeps two states per parameter, momentum one": "Adam 为每个参数保存两份状态，动量法保存一份",
    "Recompute each block in backward: less memory, about one more forward":
        "反向时重算每个模块：显存更少，约多一次前向计算",
    "ReLU(inplace=True) and friends write into their input": "ReLU(inplace=True) 等激活函数直接写回输入",
    "llama.cpp has no fp8 cache type; int8 is its q8_0": "llama.cpp 没有 fp8 缓存类型；int8 即其 q8_0",
    # breakdown
    "Memory by category": "显存分类", "Per layer": "逐层", "Over the step": "训练步全过程",
    "Memory vs batch": "显存与批大小", "Memory kept for backward": "为反向保留的显存", "Output size": "输出大小",
    "FLOPs": "FLOPs", "Chart:": "图表：", "No estimate yet": "尚无估算结果",
    "Parameters": "参数量", "Forward": "前向", "Step": "每步", "Peak allocated": "峰值分配",
    "Required": "所需显存", "Reserved": "缓存保留", "nvidia-smi": "nvidia-smi",
    "Sum of the trainable parameters of every layer: {n:,}": "各层可训练参数之和：{n:,}",
    "2 x {macs} MACs (multiply-adds of conv/linear/matmul) + elementwise work, over batch {batch}":
        "2 × {macs} 次 MAC（卷积/全连接/矩阵乘的乘加）+ 逐元素运算，按批大小 {batch} 计",
    "Forward + backward (backward: one forward for weight gradients, one for input gradients)":
        "前向 + 反向（反向：权重梯度约一次前向，输入梯度约一次前向）",
    "Inference: the forward pass only": "推理：仅前向计算",
    "Largest total of live tensors while replaying one step ({phase}, {layer}); "
    "= {fixed} fixed + {batch} x {per} per sample":
        "重放一个训练步时存活张量总量的最大值（{phase}，{layer}）；= 固定 {fixed} + {batch} × 每样本 {per}",
    "Largest total of live tensors while replaying one step ({phase}); = {fixed} fixed + {batch} x {per} per sample":
        "重放一个训练步时存活张量总量的最大值（{phase}）；= 固定 {fixed} + {batch} × 每样本 {per}",
    "The smallest allocator budget the step runs in: PyTorch's caching allocator replayed under a limit (what "
    "it cannot reuse), plus {share} and, with convolutions, a cuDNN workspace":
        "该步能运行的最小分配器预算：在限定预算下重放 PyTorch 缓存分配器（计入它无法复用的部分），再加 {share}，"
        "有卷积时再加一份 cuDNN 工作区",
    "What PyTorch's caching allocator would hold at the peak with plenty of memory":
        "显存充足时 PyTorch 缓存分配器在峰值处占用的显存",
    "Reserved + CUDA context and library workspaces: what nvidia-smi would show":
        "缓存保留 + CUDA 上下文和库工作区：即 nvidia-smi 显示的用量",
    "Layer name in the network": "网络中的层名", "Layer kind": "层类型",
    "Output of one sample; the batch dimension is left out": "单个样本的输出；不含批维度",
    "Params": "参数", "Trainable parameters of the layer (weights + bias)": "该层的可训练参数（权重 + 偏置）",
    "MACs": "MACs",
    "Multiply-adds of conv/linear/matmul in the forward pass, over the whole batch":
        "前向中卷积/全连接/矩阵乘的乘加次数，按整批计",
    "Forward + backward FLOPs over the batch: 2 x MACs + elementwise work; backward about twice the forward":
        "整批的前向 + 反向 FLOPs：2 × MACs + 逐元素运算；反向约为前向的两倍",
    "Output": "输出", "Bytes of the layer's output over the batch, in the compute precision":
        "该层整批输出的字节数（按计算精度）",
    "Kept for backward": "为反向保留",
    "Bytes autograd still holds for this layer when the forward pass ends": "前向结束时 autograd 为该层仍保留的字节数",
    # charts
    "Memory at the peak": "峰值时的显存", "Peak {total} by category": "峰值 {total} 分类构成",
    "No layer uses any": "没有层用到", "FLOPs per step (forward + backward)": "每步 FLOPs（前向 + 反向）",
    "Top {n} layers": "前 {n} 层", "peak {value}": "峰值 {value}",
    "Step of the training loop (layer by layer)": "训练循环的各个步骤（逐层）", "Allocated": "已分配",
    "Batch size": "批大小", "Memory per card": "每卡显存", "peak allocated": "峰值分配",
    "required (with allocator overhead)": "所需（含分配器开销）", "batch {batch}": "批大小 {batch}",
    # recommendations
    "Budget:": "预算：", "no limit": "不限", "Most you will pay for all the cards together, in USD":
        "所有显卡合计最多愿付的金额（美元）",
    "any vendor": "任意厂商", "any segment": "任意市场", "Card vendor": "显卡厂商", "Market segment": "市场定位",
    "up to {n} cards": "最多 {n} 张卡", "Largest number of cards of one kind to consider": "同型号显卡最多考虑几张",
    "What the ranking puts first": "排名优先考虑的目标", "used prices": "含二手价",
    "Rank by the cheaper of the newest new and used price": "按最新全新价与二手价中较低者排名",
    "every configuration": "所有配置", "Show every count and plan, not only each card's best":
        "显示所有数量和并行方案，而不只是每张卡的最佳配置",
    "Ranking cards": "正在为显卡排名", "{n} rows, {fits} fit; {total} configurations ranked":
        "{n} 行，其中 {fits} 行放得下；共排名 {total} 种配置",
    "Select a row to see why it fits or not.": "选择一行，查看为什么放得下或放不下。",
    "Card": "显卡", "Cards": "卡数", "Plan": "方案", "Fits": "放得下", "Does not fit": "放不下",
    "Does not run": "无法运行",
    "Needs/card": "每卡需要", "Usable/card": "每卡可用", "Max batch": "最大批", "Step ms": "每步毫秒",
    "Throughput": "吞吐量", "Price USD": "价格（美元）", "Perf/$": "性能/美元", "Perf/W": "性能/瓦",
    "Rank under the chosen objective (fitting configurations first)": "按所选目标的排名（放得下的配置在前）",
    "Card in the catalog": "目录中的显卡", "How many cards of this kind": "该型号显卡的数量",
    "How the work is split over the cards": "工作如何在多卡之间划分",
    "Required memory per card is within the card's usable memory": "每卡所需显存不超过该卡的可用显存",
    "Required bytes per card: the step's peak at this batch plus what the allocator cannot reuse, less what "
    "sharding moves off the card":
        "每卡所需字节数：该批大小下训练步峰值加上分配器无法复用的部分，再减去分片移出该卡的部分",
    "Card memory less the runtime's context (CUDA, HIP or Level Zero) and the driver's reservation":
        "显卡显存减去运行时上下文（CUDA、HIP 或 Level Zero）和驱动预留",
    "Largest per-card batch whose required memory fits, from the memory curve":
        "根据显存曲线，单卡所需显存放得下的最大批大小",
    "Predicted time of one step: the kernels each layer launches, timed on the card (fitted on the H200 and "
    "public runs on 15 cards), plus communication for multi-card plans":
        "预测的单步时间：按每层启动的内核逐个在该卡上计时（系数按 H200 及 15 种显卡的公开实测拟合），"
        "多卡方案另加通信时间",
    "Samples (or tokens) per second over all cards": "所有卡合计每秒处理的样本（或词元）数",
    "Latest catalog price for all cards together (new, or used if allowed and cheaper)":
        "目录中所有卡合计的最新价格（全新；若允许二手且更便宜则用二手价）",
    "Throughput per dollar of the price": "每美元价格对应的吞吐量", "Throughput per watt of board power (TDP)":
        "每瓦板卡功耗（TDP）对应的吞吐量",
    "one card": "单卡", "data parallel": "数据并行", "yes": "是", "no": "否", "n/a": "无",
    "{count} × {card}, {plan}": "{count} × {card}，{plan}",
    "Needs {need} per card at batch {batch}; the card has {usable} usable after {context} "
    "({margin} {what}).": "批大小 {batch} 时每卡需要 {need}；扣除{context}后该卡可用 {usable}（{what} {margin}）。",
    "to spare": "富余", "short": "不足",
    "Largest batch per card that fits: {n}.": "单卡放得下的最大批大小：{n}。",
    "Data parallel: every card holds the whole model, its gradients and optimizer state. Memory does not "
    "pool across cards (not over NVLink, SLI or PCIe); more cards raise throughput, not the model size "
    "that fits.": "数据并行：每张卡都保存完整的模型、梯度和优化器状态。显存不会在多卡之间合并（NVLink、SLI 或 PCIe "
                   "都不会）；加卡提高的是吞吐量，而不是能放下的模型大小。",
    "optimizer state": "优化器状态", "optimizer state and gradients": "优化器状态和梯度",
    "optimizer state, gradients and parameters": "优化器状态、梯度和参数",
    "{plan} shards the {what} over the {count} cards, so each holds a share; activations are not sharded.":
        "{plan} 将{what}分片到 {count} 张卡上，每张卡只保存一部分；激活值不分片。",
    "Price {price} USD ({condition}, {date}).": "价格 {price} 美元（{condition}，{date}）。",
    # catalog editor
    "Search cards (name, vendor, architecture)": "搜索显卡（名称、厂商、架构）",
    "Select a card to see and edit its prices.": "选择一张显卡以查看和编辑价格。",
    "Add your own card…": "添加自定义显卡…", "Add your own card": "添加自定义显卡",
    "Prices (newest first):": "价格（最新在前）：",
    "Price of one card, or its rent for one GPU-hour": "单张显卡的价格，或其每 GPU 小时的租金",
    "Currency of the price; the ranking converts it to USD at the bundled rates":
        "价格的币种；排名时按内置汇率换算为美元",
    "purchase": "购买", "per GPU-hour": "每 GPU 小时", "launch price": "首发价", "shop": "商店",
    "used market": "二手市场", "cloud, on demand": "云，按需", "cloud, spot": "云，竞价",
    "cloud, reserved": "云，预留", "Where you saw it (shop, cloud, address)": "在哪里看到的（商店、云厂商、网址）",
    "Date the price was seen": "价格的日期", "Add price": "添加价格",
    "Reading the catalog": "正在读取显卡目录", "Reading prices": "正在读取价格", "Saving the price": "正在保存价格",
    "Adding the card": "正在添加显卡", "Opening the catalog": "正在打开显卡目录",
    "Vendor": "厂商", "Segment": "市场定位", "Memory": "显存", "Bandwidth GB/s": "带宽 GB/s",
    "FP32 TFLOPS": "FP32 TFLOPS", "TDP W": "功耗 W", "Mine": "自定义",
    "No card selected": "未选择显卡", "Select the card whose price you are entering.": "请先选择要录入价格的显卡。",
    "Cannot read the catalog": "无法读取显卡目录", "Cannot read prices": "无法读取价格",
    "entered by you": "由你录入", "entered by the user": "用户录入",
    "Price not saved": "价格未保存", "Card not added": "显卡未添加",
    "Architecture": "架构", "Memory type": "显存类型", "Bandwidth": "带宽", "Source": "来源",
    # live GPUs
    "in use": "已用", "GPU": "GPU", "memory": "显存", "draw": "功耗", "total": "总量", "limit": "上限",
    "memory GiB": "显存 GiB", "utilisation %": "利用率 %", "power W": "功耗 W", "minutes ago": "分钟前",
    "{figure}:": "{figure}：", "(disappeared)": "（已消失）",
    "No longer listed by the NVIDIA driver.": "NVIDIA 驱动已不再列出这张显卡。",
    "none": "无", "Processes: {list}": "进程：{list}", "(its last reading)": "（按最后一次读数）",
    "Reading the GPUs…": "正在读取 GPU…", "No NVIDIA GPU found": "未找到 NVIDIA GPU",
    "{count} NVIDIA GPU · NVIDIA driver {driver}": "{count} 张 NVIDIA GPU · NVIDIA 驱动 {driver}",
    "{count} NVIDIA GPUs · NVIDIA driver {driver}": "{count} 张 NVIDIA GPU · NVIDIA 驱动 {driver}",
    "workload": "工作负载",
    "{subject}vs your {name}: memory n/a": "{subject}与你的 {name} 对比：显存信息不可用",
    "{subject}does not fit on your {name}: {need} of {usable} GiB":
        "{subject}在你的 {name} 上放不下：需要 {need} GiB，可用 {usable} GiB",
    "{subject}fits on your {name}: {need} of {usable} GiB":
        "{subject}可以放进你的 {name}：需要 {need} GiB，可用 {usable} GiB",
    "(but only {free} GiB are free now)": "（但当前只有 {free} GiB 空闲）",
    "Memory used": "已用显存", "Memory free": "空闲显存", "Driver reserved": "驱动保留",
    "GPU utilisation": "GPU 利用率", "Memory utilisation": "显存带宽利用率", "Temperature": "温度",
    "Fan": "风扇", "Power": "功耗", "SM clock": "SM 频率", "Memory clock": "显存频率", "PCIe link": "PCIe 链路",
    # make it fit
    "as it is": "保持原样", "smaller batch": "更小的批大小", "gradient accumulation": "梯度累积",
    "mixed precision (bf16 autocast)": "混合精度（bf16 autocast）",
    "mixed precision (fp16 autocast)": "混合精度（fp16 autocast）",
    "gradient checkpointing": "梯度检查点", "in-place activations": "原地激活函数",
    "SGD with momentum instead of Adam": "用带动量的 SGD 代替 Adam",
    "plain SGD instead of Adam": "用普通 SGD 代替 Adam",
    "8-bit optimizer state": "8 位优化器状态", "freeze the first half of the blocks": "冻结前一半的模块",
    "train only the last layer": "只训练最后一层", "shorter sequences": "更短的序列",
    "ZeRO-1 sharding": "ZeRO-1 分片", "ZeRO-2 sharding": "ZeRO-2 分片", "ZeRO-3 / FSDP sharding": "ZeRO-3 / FSDP 分片",
    "LoRA adapters on a frozen base": "冻结基座上的 LoRA 适配器",
    "QLoRA (4-bit frozen base + LoRA adapters)": "QLoRA（4 位冻结基座 + LoRA 适配器）",
    "8-bit weights": "8 位权重", "4-bit weights (GPTQ/AWQ)": "4 位权重（GPTQ/AWQ）",
    "4-bit weights (GGUF Q4_K_M)": "4 位权重（GGUF Q4_K_M）", "fp8 KV cache": "fp8 KV 缓存",
    "8-bit weights (GGUF Q8_0)": "8 位权重（GGUF Q8_0）",
    "llama.cpp's 8-bit blocks (8.5 bits per weight): close to 16-bit quality":
        "llama.cpp 的 8 位块（每个权重 8.5 位）：质量接近 16 位",
    "shorter context": "更短的上下文", "tensor parallel": "张量并行", "layers split over cards": "按层拆分到多张卡",
    " on {count} cards": "（{count} 张卡）", "same speed": "速度不变", "{value} slower": "慢 {value}",
    "{value} faster": "快 {value}", "Change": "改动", "Needs": "需要", "Speed": "速度", "Note": "说明",
    "Make it fit on {card}": "让它放进 {card}", "Make it fit on {card}…": "让它放进 {card}…",
    "Make it fit on…": "让它放得下…",
    "What to change so that the workload fits the selected card, each change measured":
        "要改什么才能让工作负载放进所选显卡，每项改动都经过重新估算",
    "Measuring the changes…": "正在估算各项改动…", "Measuring the changes": "正在估算各项改动",
    "Apply": "应用", "Set the workload controls to this change": "把工作负载设置改成这一项", "Close": "关闭",
    "fits": "放得下", "fits, under 10% to spare": "放得下，但余量不足 10%", "does not fit": "放不下",
    "{card}: the workload needs {need}, the card has {usable} usable: {state}.":
        "{card}：工作负载需要 {need}，显卡可用 {usable}：{state}。",
    "Each change alone": "单项改动", "Fewest changes that fit, keeping the training the same":
        "放得下的最少改动（训练方式不变）",
    "Fewest changes that fit (they change the training)": "放得下的最少改动（会改变训练方式）",
    # inference and generation: no backward pass, gradients, optimizer state or GradScaler
    "Fewest changes that fit, keeping the outputs the same": "放得下的最少改动（输出不变）",
    "Fewest changes that fit (they change the numbers the model computes)": "放得下的最少改动（会改变模型算出的数值）",
    "the batch in parts": "分批依次计算",
    "largest batch that fits: {batch} instead of {old}; fewer samples at a time, each computed as before":
        "放得下的最大批大小：{batch}（原为 {old}）；每次处理的样本变少，每个样本的计算不变",
    "{steps} passes of batch {batch} one after another ({effective} in all): the same outputs":
        "依次运行 {steps} 次、每次批大小 {batch}（共 {effective}）：输出不变",
    "torch.autocast(dtype=torch.float16): weights stay fp32, matmuls and convolutions run in fp16":
        "torch.autocast(dtype=torch.float16)：权重保持 fp32，矩阵乘法和卷积以 fp16 计算",
    "weights and activations in bf16 (model.to(torch.bfloat16)): check the outputs against fp32":
        "权重和激活值都用 bf16（model.to(torch.bfloat16)）：请与 fp32 的输出对比检查",
    "Sharding over several cards": "在多张卡上分片", "Recommended: {change} ({speed}).": "推荐：{change}（{speed}）。",
    "Not a workload control: set it in your training script.": "这不是工作负载设置：请在训练脚本中修改。",
    "the workload as set": "当前设置的工作负载",
    "largest batch that fits: {batch} instead of {old}; fewer samples per step changes training "
    "(scale the learning rate, or accumulate gradients)":
        "放得下的最大批大小：{batch}（原为 {old}）；每步样本变少会改变训练（调整学习率，或累积梯度）",
    "{steps} steps of batch {batch} per optimizer step (effective batch {effective}); "
    "the gradients stay allocated between steps":
        "每次优化器更新累积 {steps} 步、每步批大小 {batch}（等效批大小 {effective}）；梯度在各步之间一直占用显存",
    "torch.autocast(dtype=torch.bfloat16): weights stay fp32, matmuls and convolutions run in bf16":
        "torch.autocast(dtype=torch.bfloat16)：权重保持 fp32，矩阵乘法和卷积以 bf16 计算",
    "torch.autocast(dtype=torch.float16) with a GradScaler: weights stay fp32":
        "torch.autocast(dtype=torch.float16) 配合 GradScaler：权重保持 fp32",
    "weights, gradients and optimizer state in bf16: watch the numerics (Kahan summation or "
    "stochastic rounding help)": "权重、梯度和优化器状态都用 bf16：注意数值精度（Kahan 求和或随机舍入有帮助）",
    "recomputes each block in backward: {extra} more FLOPs per step ({share} of a forward)":
        "反向时重算每个模块：每步多 {extra} 的 FLOPs（相当于 {share} 次前向）",
    "nn.ReLU(inplace=True) and friends write into their input": "nn.ReLU(inplace=True) 等直接写入其输入",
    "one momentum buffer instead of Adam's two states; may need a retuned learning rate":
        "只有一个动量缓冲区，而不是 Adam 的两个状态；可能需要重新调学习率",
    "no optimizer state at all; may converge slower than Adam": "完全没有优化器状态；收敛可能比 Adam 慢",
    "bitsandbytes AdamW8bit: 1 byte per state element and an fp32 scale per 256, instead of {dtype} bytes":
        "bitsandbytes AdamW8bit：每个状态元素 1 字节，每 256 个元素另加一个 fp32 缩放系数，而不是 {dtype} 字节",
    "fine-tuning: {frozen} parameters frozen (no gradients, optimizer state or saved activations for them)":
        "微调：冻结 {frozen} 个参数（它们没有梯度、优化器状态，也不保存激活值）",
    "fine-tuning: {frozen} parameters frozen; only the last layer trains": "微调：冻结 {frozen} 个参数；只训练最后一层",
    "{tokens} tokens per sample instead of {old}": "每个样本 {tokens} 个词元（原为 {old}）",
    "on {count} cards: optimizer state sharded over them ({link})": "在 {count} 张卡上：优化器状态分片存放（{link}）",
    "on {count} cards: optimizer state and gradients sharded over them ({link})":
        "在 {count} 张卡上：优化器状态和梯度分片存放（{link}）",
    "on {count} cards: parameters, gradients and optimizer state sharded over them ({link})":
        "在 {count} 张卡上：参数、梯度和优化器状态分片存放（{link}）",
    # make-it-fit notes of language models (advisor/recommend/fit/keys.py CHANGES)
    "fine-tuning: only rank-{rank} adapters train (gradients and optimizer state for them alone); "
    "activations are still saved through the frozen layers":
        "微调：只训练秩为 {rank} 的适配器（只有它们有梯度和优化器状态）；冻结层的激活值仍要保存",
    "the frozen base in 4-bit NF4 with double quantization (bitsandbytes), rank-{rank} adapters train":
        "冻结的基座以 4 位 NF4 加双重量化存放（bitsandbytes），训练秩为 {rank} 的适配器",
    "weights in 8 bits with per-channel scales: decode reads half the bytes of 16-bit; "
    "check the quality on your task":
        "权重为 8 位、每通道一个缩放：解码读取的字节是 16 位的一半；请在你的任务上检查质量",
    "weights in 4 bits with a scale and zero per 128-weight group: some quality loss":
        "权重为 4 位、每 128 个权重一组缩放和零点：质量略有损失",
    "llama.cpp's 4-bit K-quant mix (about 4.8 bits per weight): some quality loss":
        "llama.cpp 的 4 位 K-quant 混合格式（每个权重约 4.8 位）：质量略有损失",
    "K and V cached in fp8 (vLLM --kv-cache-dtype fp8): half the cache of 16-bit":
        "K 和 V 以 fp8 缓存（vLLM --kv-cache-dtype fp8）：缓存是 16 位的一半",
    "{prompt} prompt + {new} generated tokens instead of {old_prompt} + {old_new}":
        "提示 {prompt} 个词元 + 生成 {new} 个（原为 {old_prompt} + {old_new}）",
    "on {count} cards: weights and KV cache split {count} ways, two all-reduces per layer ({link})":
        "在 {count} 张卡上：权重和 KV 缓存分成 {count} 份，每层两次 all-reduce（{link}）",
    "on {count} cards: layers divided between them ({link}); a token passes each in turn, so "
    "decoding runs at about one card's speed":
        "在 {count} 张卡上：各层分配到各卡（{link}）；每个词元依次经过每张卡，因此解码速度约等于一张卡",
    "Choose the model": "选择模型", "Hover a circle for its numbers; click it to load that model.":
        "鼠标悬停在圆圈上查看数据；单击即可载入该模型。",
    "top-1 {value}%": "top-1 {value}%", "accuracy unknown": "准确率未知",
    "{value} GMACs per image": "每张图 {value} GMACs",
    "{value} M parameters": "{value} M 参数", "No published accuracy to show": "没有可显示的公开准确率",
    "Forward compute per image (GMACs, log scale)": "每张图的前向计算量（GMACs，对数坐标）",
    "ImageNet top-1 accuracy (%)": "ImageNet top-1 准确率（%）",
    "Accuracy, compute and size of known models": "已知模型的准确率、计算量和规模",
    "Top-1: torchvision IMAGENET1K_V1 weights, acc@1": "Top-1：torchvision IMAGENET1K_V1 权重的 acc@1",
    "your model: {name}": "你的模型：{name}", "ideal: fast, accurate, small": "理想：快、准、小",
    "circle area": "圆面积",
    # report
    "Which GPU for {model}": "{model} 该选哪块 GPU",
    "Advisor {version} report, made {date}": "Advisor {version} 报告，生成于 {date}",
    "Advisor {version} · {model} · page {page} of {pages}": "Advisor {version} · {model} · 第 {page} 页，共 {pages} 页",
    "Best under “{objective}”: {count} × {card} ({plan}), {throughput} {unit}, price {price}.":
        "按“{objective}”最佳：{count} × {card}（{plan}），{throughput} {unit}，价格 {price}。",
    "No listed configuration fits; try a smaller batch, mixed precision or gradient checkpointing.":
        "列出的配置都放不下；请尝试更小的批大小、混合精度或梯度检查点。",
    "throughput per dollar": "每美元吞吐量", "lowest price": "价格最低", "highest throughput": "吞吐量最高",
    "Model": "模型", "built in the app": "在应用中搭建", "Layers": "层数",
    "MACs, forward": "MACs（前向）", "{macs} multiply-adds at batch {batch}": "批大小 {batch} 时 {macs} 次乘加",
    "FLOPs, forward": "FLOPs（前向）",
    "{flops} (FLOPs = 2 x MACs + elementwise)": "{flops}（FLOPs = 2 × MACs + 逐元素运算）",
    "FLOPs per step": "每步 FLOPs", "(forward + backward)": "（前向 + 反向）", "(forward only)": "（仅前向）",
    "{batch} samples per card": "每卡 {batch} 个样本", "none (inference)": "无（推理）",
    "Estimation method": "估算方法",
    "analytic: layer formulas over the layer graph": "解析法：按层图逐层套用公式",
    "simulated: one real PyTorch step on the meta device, every allocation tracked":
        "模拟法：在 meta 设备上运行一次真实的 PyTorch 训练步，跟踪每一次显存分配",
    "Memory breakdown": "显存明细", "at {phase}, layer {layer}": "出现在{phase}阶段，层 {layer}",
    "at {phase}": "出现在{phase}阶段",
    "Memory at the peak by category (what decides whether a card fits is the required memory, per card):":
        "峰值时各类显存占用（决定能否放进一张卡的是每卡所需显存）：",
    "Recommended cards": "推荐显卡",
    "Ranked by {objective}; {n} configurations (1 to {max} cards of a kind, every plan) were considered; one row "
    "per card, in its best configuration.":
        "按“{objective}”排名；共考虑 {n} 种配置（同型号 1 至 {max} 张卡，所有并行方案）；每张卡一行，显示其最佳配置。",
    "Budget: {budget} USD for all the cards together.": "预算：所有显卡合计 {budget} 美元。",
    "Only cards: {filters}.": "仅限显卡：{filters}。",
    "Used prices were considered where cheaper.": "二手价更便宜时按二手价计。",
    "No card of the catalog matches the filters.": "显卡目录中没有符合筛选条件的显卡。",
    "Price": "价格", "of {usable}": "共 {usable}",
    "Needs/card: the step's required memory at this batch (its peak plus what the allocator cannot reuse), less "
    "what sharding moves off the card, of the memory the card leaves usable. Max batch: largest batch per card "
    "that fits. Price: for all the cards of the configuration, with its condition and date. Per $1k: {unit} per "
    "1,000 USD of the price (Per $1/h: per USD of hourly rent); Perf/W: {unit} per watt of board power (TDP).":
        "每卡需要：该批大小下训练步所需显存（峰值加上分配器无法复用的部分），减去分片移出该卡的部分，后面是该卡的可用显存。"
        "最大批：每卡能放下的最大批大小。价格：该配置所有显卡的总价，附成色和日期。每千美元：每 1,000 美元价格的 {unit}"
        "（每 1 美元/小时：每美元小时租金的 {unit}）；性能/瓦：每瓦板卡功耗（TDP）的 {unit}。",
    "More than one card": "多卡",
    "Sharding divides the model state instead: ZeRO-1 shards the optimizer state, ZeRO-2 also the gradients, "
    "ZeRO-3 (FSDP) also the weights; activations are never sharded. Sharded plans need DeepSpeed or PyTorch FSDP, "
    "and they communicate more per step.":
        "分片才会划分模型状态：ZeRO-1 分片优化器状态，ZeRO-2 再加梯度，ZeRO-3（FSDP）再加权重；激活值从不分片。"
        "分片方案需要 DeepSpeed 或 PyTorch FSDP，且每步通信更多。",
    "Listed above with sharding: {list}.": "上表中使用分片的配置：{list}。",
    "Peak and required memory per card against the batch; a line for each of the first fitting cards at the memory "
    "a step may use on it.": "每卡峰值显存和所需显存随批大小的变化；前几张放得下的显卡各画一条线，表示一步可用的显存。",
    "Top layers by memory": "显存占用最多的层", "Top layers by compute": "计算量最大的层",
    "GPUs in this computer": "本机 GPU", "The local GPUs were not read.": "未读取本机 GPU。",
    "In use": "已用", "This workload": "本工作负载", "read {time}": "读取于 {time}",
    "Assumptions and provenance": "假设与数据来源", "Overheads assumed": "假定的开销",
    "Required memory (vLLM): the card memory whose gpu_memory_utilization share ({share}) holds the weights, the "
    "startup profile's peak and the KV blocks of the batch, and whose rest holds what the engine allocates after "
    "the share, less the CUDA context, which lies outside it.":
        "所需显存（vLLM）：显卡的 gpu_memory_utilization 份额（{share}）须装得下权重、启动剖析时的峰值和该批次的 "
        "KV 块，其余部分须装得下引擎在份额之后分配的内存；所需显存即满足这两点的最小显卡显存，再减去位于份额之外的 "
        "CUDA 上下文。",
    "Required memory: the smallest budget in which PyTorch's caching allocator, replayed under a limit, runs the "
    "step, plus {share} and, with convolutions, a cuDNN workspace (checked against the largest "
    "batches that trained on an H200 by benchmarks/max_batch.py).":
        "所需显存：在限定预算下重放 PyTorch 缓存分配器时能运行该步的最小预算，再加 {share}，有卷积时再加一份 "
        "cuDNN 工作区（benchmarks/max_batch.py 用 H200 上实际能训练的最大批大小检验过）。",
    "Usable memory per card = card memory less the driver's reservation ({driver}) and the runtime's context "
    "with its library workspaces ({context}: the CUDA context with cuBLAS/cuDNN, {source}); assumed the same "
    "for every card, the HIP context on AMD and Level Zero's on Intel included.":
        "每卡可用显存 = 显卡显存减去驱动预留（{driver}）以及运行时上下文和库工作区（{context}：CUDA 上下文和 "
        "cuBLAS/cuDNN，{source}）；并假定适用于所有显卡，包括 AMD 上的 HIP 上下文和 Intel 上的 Level Zero 上下文。",
    "Step time: the kernels each layer launches (GEMMs, convolutions, attention, memory-bound kernels), each "
    "timed on the card, the longer of the host's dispatch and the card's work; efficiencies fitted on step "
    "times of the H200 and public runs on 15 other cards; multi-card plans add their communication over the "
    "card's link, without overlap.":
        "每步时间：按每层启动的内核（GEMM、卷积、注意力、访存受限内核）逐个在该卡上计时，取主机调度与显卡计算"
        "两者中较长者；效率系数按 H200 及另外 15 种显卡的公开实测步时拟合；多卡方案另加经显卡互连的通信时间，"
        "不假定与计算重叠。",
    "Throughput per watt uses the board power (TDP) of the catalog, not a measurement.":
        "每瓦吞吐量使用目录中的板卡功耗（TDP），并非实测值。",
    "Assumptions of the estimate, as the estimator states them": "估算的假设（估算器原文）",
    "Data sources": "数据来源",
    "Card figures and prices come from the catalog; each price is the newest it holds for the card. Check prices "
    "before buying.": "显卡参数和价格来自显卡目录；每个价格都是目录中该卡最新的价格。购买前请核实价格。",
    "figures: {source}": "参数：{source}", "price {price}, {date}: {source}": "价格 {price}，{date}：{source}",
    "the same source": "同上来源", "no price in the catalog": "目录中没有价格",
    "Export PDF report…": "导出 PDF 报告…", "Export the PDF report": "导出 PDF 报告", "PDF report": "PDF 报告",
    "Writing the PDF report": "正在生成 PDF 报告", "Cannot write the report": "无法写入报告",
    "There is no estimate to report yet.": "还没有可以写入报告的估算结果。",
    # model map in the report
    "Published ImageNet top-1 accuracy of torchvision's weights against forward compute; circle area is the "
    "parameter count. Top left is best: accurate and cheap.":
        "torchvision 权重公布的 ImageNet top-1 准确率与前向计算量的对比；圆的面积表示参数量。左上角最好：又准又省。",
    # the estimator's assumptions (advisor/core/estimate.py, advisor/importers/simulate/result.py)
    "Attention memory follows the fused SDPA kernels (output and log-sum-exp kept, no seq x seq matrix).":
        "注意力的显存按融合 SDPA 内核计算（保留输出和 log-sum-exp，不保留 seq x seq 矩阵）。",
    "Autocast: weights stay fp32; matmul/conv inputs and weights are cast to half (weight copies cached for the "
    "forward and kept for backward); softmax, layer norm and losses run in fp32.":
        "自动混合精度：权重保持 fp32；矩阵乘/卷积的输入和权重转换为半精度（权重副本在前向中缓存并保留到反向）；"
        "softmax、layer norm 和损失函数以 fp32 运行。",
    "FLOPs = 2 x MACs (multiply-adds of conv/linear/matmul) + elementwise arithmetic; MACs count multiply-adds "
    "only.":
        "FLOPs = 2 x MACs（卷积/全连接/矩阵乘的乘加）+ 逐元素运算；MACs 只计乘加。",
    "Gradient checkpointing recomputes each block (residual block or transformer layer) in backward; only block "
    "inputs are kept in forward (about one extra forward of compute).":
        "梯度检查点在反向时重算每个块（残差块或 Transformer 层）；前向只保留块的输入（约多一次前向的计算）。",
    "Memory replays one steady-state step of PyTorch's eager autograd on CUDA: saved tensors, activation "
    "gradients, in-place ops and views; every allocation rounded up to 512 bytes.":
        "显存按 PyTorch eager 自动求导在 CUDA 上的一个稳态训练步逐次重放：保存的张量、激活梯度、原地操作和视图；"
        "每次分配向上取整到 512 字节。",
    "Training: zero_grad(set_to_none=True), foreach optimizer implementations (Adam keeps two states and one "
    "parameter-sized temporary in its step); the model output is kept by the caller until the step ends.":
        "训练：zero_grad(set_to_none=True)，优化器使用 foreach 实现（Adam 保留两份状态，更新时还有一份与参数同样大小"
        "的临时张量）；模型输出由调用方保留到这一步结束。",
    "Training: zero_grad(set_to_none=True), foreach optimizer implementations (Adam keeps two states and one "
    "parameter-sized temporary in its step); the loop drops the model output before backward and keeps only "
    "the loss (transformers' Trainer, torchtune).":
        "训练：zero_grad(set_to_none=True)，优化器使用 foreach 实现（Adam 保留两份状态，更新时还有一份与参数同样大小"
        "的临时张量）；训练循环在反向传播前释放模型输出，只保留损失（transformers 的 Trainer、torchtune）。",
    "cuDNN/cuBLAS workspaces are not in peak_bytes (they depend on the algorithm cuDNN picks).":
        "peak_bytes 不含 cuDNN/cuBLAS 工作区（取决于 cuDNN 选择的算法）。",
    "peak = fixed + batch x per-sample only while the peak stays in the same phase of the step; at small batches "
    "the optimizer step or the weights can set the peak instead.":
        "只有当峰值停留在训练步的同一阶段时，峰值 = 固定部分 + 批大小 x 每样本部分；批很小时，峰值可能出现在优化器"
        "更新或由权重决定。",
    "required_bytes replays the training loop through a model of the CUDA caching allocator limited to a budget "
    "(cached segments are released before it gives up) and finds the smallest budget that runs, plus 20 MiB (one "
    "large-pool segment, the replay's granule) and, with convolutions, the largest convolution output for cuDNN's "
    "workspace; device_total_bytes adds the CUDA context and driver reservation measured on an NVIDIA H200, "
    "driver 580.159, CUDA 13.0, PyTorch 2.11 (shared/calibration/h200).":
        "required_bytes 把训练循环交给限定预算的 CUDA 缓存分配器模型重放（放弃之前先释放缓存的段），求出能运行的"
        "最小预算，再加上 20 MiB（一个大池段，即重放的粒度），有卷积时再加上最大卷积输出作为 cuDNN 工作区；"
        "device_total_bytes 加上 CUDA 上下文和驱动保留，数值测自 NVIDIA H200，驱动 580.159，CUDA 13.0，"
        "PyTorch 2.11（shared/calibration/h200）。",
    "Simulated: the module's own forward, loss, backward and optimizer step ran on the meta device (no values) "
    "twice; the second step is measured, as torch.cuda.max_memory_allocated() over steady-state iterations; every "
    "allocation is rounded up to 512 bytes.":
        "模拟：模型自己的前向、损失、反向和优化器更新在 meta 设备上（不计算数值）运行两次；测量第二步，"
        "相当于稳态迭代中的 torch.cuda.max_memory_allocated()；每次分配向上取整到 512 字节。",
    "CUDA behaviour is modelled where meta/CPU execution differs: autocast follows CUDA's op lists, "
    "scaled-dot-product attention uses the fused kernel CUDA picks (flash for half precision without a mask, "
    "else memory-efficient) with its backward workspaces; optimizers use foreach implementations.":
        "在 meta/CPU 执行与 CUDA 不同之处按 CUDA 的行为建模：自动混合精度遵循 CUDA 的算子列表；缩放点积注意力使用 "
        "CUDA 会选择的融合内核（半精度且无掩码时用 flash，否则用 memory-efficient），并计入其反向工作区；"
        "优化器使用 foreach 实现。",
    "cuDNN/cuBLAS workspaces are not in peak_bytes (they depend on the algorithm cuDNN picks); data-dependent "
    "values (.item()) are stand-ins (True after all(), False after any(), else 1).":
        "peak_bytes 不含 cuDNN/cuBLAS 工作区（取决于 cuDNN 选择的算法）；依赖数据的值（.item()）用替代值"
        "（all() 之后为 True，any() 之后为 False，其余为 1）。",
    "reserved_bytes replays every allocation and free through a model of the CUDA caching allocator; "
    "required_bytes is the smallest budget in which that replay runs when the allocator is limited (it releases "
    "cached segments before it gives up), plus 20 MiB and, with convolutions, the largest convolution "
    "output for cuDNN's workspace; device_total_bytes adds the CUDA context and driver reservation measured on "
    "an NVIDIA H200, driver 580.159, CUDA 13.0, PyTorch 2.11 (shared/calibration/h200).":
        "reserved_bytes 把每次分配和释放交给 CUDA 缓存分配器的模型重放得出；required_bytes 是分配器受限时该重放能"
        "运行的最小预算（放弃之前先释放缓存的段），再加上 20 MiB，有卷积时再加上最大卷积输出作为 cuDNN 工作区；"
        "device_total_bytes 加上 CUDA 上下文和驱动保留，数值测自 NVIDIA H200，驱动 580.159，CUDA 13.0，"
        "PyTorch 2.11（shared/calibration/h200）。",
    "FLOPs count 2 x multiply-adds of matmuls, convolutions and attention (torch.utils.flop_counter formulas; a "
    "convolution's backward counts its forward once per gradient).":
        "FLOPs 按矩阵乘、卷积和注意力的 2 x 乘加计（torch.utils.flop_counter 的公式；"
        "卷积的反向对每个梯度计一次前向）。",
    "amp_fp16: GradScaler is modelled as the scaled loss; unscaling is in place.":
        "amp_fp16：GradScaler 按缩放后的损失建模；反缩放为原地操作。",
    # why a ranked configuration fits or not (advisor/recommend/reasons.py TEMPLATES)
    "fits: needs {required_bytes} per card at batch {batch}; {memory_bytes} card has {usable_bytes} usable after "
    "{context}":
        "放得下：批大小 {batch} 时每张卡需要 {required_bytes}；"
        "{memory_bytes} 的卡扣除{context}后可用 {usable_bytes}",
    "does not fit: needs {required_bytes} per card at batch {batch}; {memory_bytes} card has {usable_bytes} usable "
    "after {context}":
        "放不下：批大小 {batch} 时每张卡需要 {required_bytes}；"
        "{memory_bytes} 的卡扣除{context}后可用 {usable_bytes}",
    # the runtime context a card loses memory to (advisor/catalog/software.py context_name); a Latin name
    # starts with the space that sets it off from the Chinese before it ("扣除 CUDA 上下文后")
    "the CUDA context": " CUDA 上下文", "the HIP context": " HIP 上下文",
    "the Level Zero context": " Level Zero 上下文", "the driver's context": "驱动上下文",
    "memory modelled on CUDA's allocator (PyTorch runs this card through {software})":
        "显存按 CUDA 分配器建模（PyTorch 通过 {software} 运行这块卡）",
    "data parallel: each card holds the whole model, memory does not pool":
        "数据并行：每张卡都保存整个模型，显存不会合并",
    "{stage} shards model state over {count} cards ({link})": "{stage} 把模型状态分片到 {count} 张卡上（{link}）",
    "tensor parallel over {count} cards ({link}): each holds 1/{count} of the weights and KV cache, two "
    "all-reduces per layer":
        "在 {count} 张卡上张量并行（{link}）：每张卡保存 1/{count} 的权重和 KV 缓存，每层两次 all-reduce",
    "layers split over {count} cards ({link}): memory adds up, but every token passes each card in turn, so "
    "decoding runs at about one card's speed":
        "按层拆分到 {count} 张卡上（{link}）：显存相加，但每个词元依次经过每张卡，所以解码速度约为一张卡的速度",
    "layers split over {count} cards ({link}): each holds its layers' weights, gradients and optimizer state, "
    "and one card computes at a time, so a step takes about one card's time":
        "按层拆分到 {count} 张卡上（{link}）：每张卡保存其各层的权重、梯度和优化器状态，同一时刻只有一张卡在计算，"
        "所以一步的时间约为一张卡的时间",
    "fits only because model state is sharded": "只因模型状态被分片才放得下",
    "fits only because weights and KV cache are split over {count} cards":
        "只因权重和 KV 缓存被拆分到 {count} 张卡上才放得下",
    "fits only because layers are split over {count} cards": "只因各层被拆分到 {count} 张卡上才放得下",
    "{count} cards are more than one desktop holds: a board with that many slots, a server or a rack, and its "
    "power supply, cost extra": "{count} 张卡超出一台台式机的容量：需要另购插槽足够的主板、服务器或机架以及相应电源",
    "incomplete: {missing} not given; set them in the catalog": "不完整：缺少 {missing}；请在显卡目录中填写",
    # the workload's runtime cannot run the card (advisor/recommend/runtime_support.py)
    "does not run: {runtime} needs compute capability {needed} or newer; {architecture} is {capability}":
        "无法运行：{runtime} 需要计算能力 {needed} 或更高；{architecture} 的计算能力为 {capability}",
    "does not run: {runtime} runs bf16 only from compute capability 8.0 (Ampere); {architecture} is "
    "{capability}: choose precision fp16":
        "无法运行：{runtime} 只在计算能力 8.0（Ampere）及以上运行 bf16；{architecture} 的计算能力为 "
        "{capability}：请选择 fp16 精度",
    "does not run: {runtime} lists {listed} among the AMD GPUs it supports, not {architecture}":
        "无法运行：{runtime} 支持的 AMD GPU 为 {listed}，不含 {architecture}",
    "does not run: {runtime} has no backend for {architecture} ({software})":
        "无法运行：{runtime} 没有适用于 {architecture}（{software}）的后端",
    "memory would fit: needs {required_bytes} per card at batch {batch}; {memory_bytes} card has {usable_bytes} "
    "usable after {context}":
        "显存放得下：批大小 {batch} 时每张卡需要 {required_bytes}；"
        "{memory_bytes} 的卡扣除{context}后可用 {usable_bytes}",
}
