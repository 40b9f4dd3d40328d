"""Chinese for the errors the importers and the builder raise in English (errors.py matches them as templates:
{reason} and {rest} are messages of their own; a message's place, "conv3: ...", is split off before these
are looked up, so most templates start with what is wrong)."""

MESSAGES: dict[str, str] = {
    # the layer list (appstate/draft.py, core/graph.py, importers/netfile.py's fields)
    "input {name} is not a layer above this one": "输入 {name} 不是上方的某一层",
    "input {name} is not a layer before this one": "输入 {name} 不是此前的某一层",
    "another layer has this name": "已有同名的层",
    "a layer with this name already exists": "已有同名的层",
    "the network has no layers": "网络中没有任何层",
    "input {index} does not exist": "输入 {index} 不存在",
    "output shape {shape} has a non-positive size": "输出形状 {shape} 含有非正的尺寸",
    "unknown layer kind {kind}": "未知的层类型 {kind}",
    "{kind} has no field {name} (fields: {fields})": "{kind} 没有字段 {name}（可用字段：{fields}）",
    "field {name}: {reason}, got {value}": "字段 {name}：{reason}，实际为 {value}",
    "expected true or false": "应为 true 或 false",
    "expected a whole number of at most 2**31 in size, got {value}": "应为不超过 2**31 的整数，实际为 {value}",
    "expected a finite number, got {value}": "应为有限的数，实际为 {value}",
    "expected text": "应为文本",
    "expected one of {choices}": "应为以下之一：{choices}",
    "expected a list of at most {n} whole numbers of at most 2**31 each":
        "应为至多 {n} 个整数的列表，每个不超过 2**31",
    "expected a whole number or a list of whole numbers": "应为整数或整数列表",
    "layer {n}: needs an object with a \"kind\"": "第 {n} 层：需要一个带 \"kind\" 的对象",
    "\"inputs\" must be a list of layer names": "\"inputs\" 必须是层名的列表",
    "\"params\" must be an object": "\"params\" 必须是一个对象",
    "\"layers\" must be a list": "\"layers\" 必须是列表",
    "a transformers config.json, not an advisor network: give it as hf:PATH":
        "这是 transformers 的 config.json，不是 advisor 网络文件：请写成 hf:路径",
    "not an advisor network (expected \"format\": \"{format}\")":
        "不是 advisor 网络文件（应有 \"format\": \"{format}\"）",
    "network format version {version} is not supported (expected {expected})":
        "不支持网络格式版本 {version}（应为 {expected}）",
    "{n} layers: at most {most} are supported": "{n} 层：最多支持 {most} 层",
    "not valid JSON ({reason})": "不是有效的 JSON（{reason}）",
    "not valid JSON: {reason}": "不是有效的 JSON：{reason}",
    "not a network: JSON nested too deeply": "不是网络文件：JSON 嵌套过深",
    # one layer's shapes (core/ops)
    "takes one input, got {n}": "只接受一个输入，实际为 {n} 个",
    "{what} expects an input of rank {rank} per sample, got shape {shape}":
        "{what} 要求每个样本的输入为 {rank} 维，实际形状为 {shape}",
    "{name} must be positive, got {value}": "{name} 必须为正数，实际为 {value}",
    "padding must not be negative, got {value}": "padding 不能为负，实际为 {value}",
    "groups {groups} must divide in_channels {inputs} and out_channels {outputs}":
        "groups {groups} 必须整除 in_channels {inputs} 和 out_channels {outputs}",
    "kernel {kernel} larger than padded input {size}": "卷积核 {kernel} 大于填充后的输入 {size}",
    "output_padding {value} must be smaller than stride or dilation":
        "output_padding {value} 必须小于 stride 或 dilation",
    "padding {padding} must be at most half the kernel {kernel}": "padding {padding} 不能超过卷积核 {kernel} 的一半",
    "dropout probability must be in [0, 1), got {p}": "dropout 概率必须在 [0, 1) 内，实际为 {p}",
    "stochastic depth probability must be in [0, 1], got {p}": "随机深度概率必须在 [0, 1] 内，实际为 {p}",
    "embedding expects integer token ids as input": "embedding 的输入应为整数词元 ID",
    "sequence length {n} exceeds {most} positions": "序列长度 {n} 超过了 {most} 个位置",
    "an input layer takes no inputs": "输入层不接受输入",
    "input shape must be positive sizes, got {shape}": "输入形状的各维必须为正，实际为 {shape}",
    "linear needs an input with a feature dimension": "linear 的输入需要有特征维",
    "batchnorm needs a channel dimension": "batchnorm 的输入需要有通道维",
    "layernorm needs a feature dimension": "layernorm 的输入需要有特征维",
    "rmsnorm needs a feature dimension": "rmsnorm 的输入需要有特征维",
    "groups {groups} must divide the channels of input {shape}": "groups {groups} 必须整除输入 {shape} 的通道数",
    "groups {groups} must divide the channels of {shape}": "groups {groups} 必须整除 {shape} 的通道数",
    "cross-entropy expects float logits, got {dtype} of shape {shape}":
        "交叉熵的 logits 应为浮点数，实际为形状 {shape} 的 {dtype}",
    "start_dim {dim} outside input shape {shape}": "start_dim {dim} 超出输入形状 {shape}",
    "cannot reshape {shape} ({n} elements) to {target}": "无法把 {shape}（{n} 个元素）变形为 {target}",
    "permutation {dims} does not match input rank {rank}": "置换 {dims} 与输入维数 {rank} 不符",
    "slice {start}:{stop} of dim {dim} outside {shape}": "第 {dim} 维的切片 {start}:{stop} 超出 {shape}",
    "shapes {a} and {b} do not broadcast": "形状 {a} 和 {b} 无法广播",
    "add takes two inputs, got {n}": "add 接受两个输入，实际为 {n} 个",
    "mul takes two inputs, got {n}": "mul 接受两个输入，实际为 {n} 个",
    "concat needs at least one input": "concat 至少需要一个输入",
    "concat dim {dim} outside input shape {shape}": "concat 的维度 {dim} 超出输入形状 {shape}",
    "cannot concatenate {a} with {b} along dim {dim}": "无法沿第 {dim} 维拼接 {a} 和 {b}",
    "heads {heads} must be a multiple of kv_heads {kv}": "heads {heads} 必须是 kv_heads {kv} 的倍数",
    "packed qkv width {width} is not divisible by {n} heads": "打包的 qkv 宽度 {width} 不能被 {n} 个头整除",
    "attention takes q, k, v (or one packed qkv) shaped (seq, features)":
        "attention 接受形状为 (seq, features) 的 q、k、v（或一个打包的 qkv）",
    "rotary embedding takes one (seq, features) input": "旋转位置编码接受一个 (seq, features) 输入",
    "{kind} expects (seq, features) per sample, got {shape}": "{kind} 要求每个样本为 (seq, features)，实际为 {shape}",
    "output shape must be positive sizes, got {shape}": "输出形状的各维必须为正，实际为 {shape}",
    "made for {n} inputs, got {got}": "为 {n} 个输入而建，实际为 {got} 个",
    "counts must not be negative": "计数不能为负",
    "window {window} must divide the padded size {size}": "窗口 {window} 必须整除填充后的尺寸 {size}",
    "patch merging needs an even size (pad first), got {size}": "patch merging 需要偶数尺寸（先填充），实际为 {size}",
    "{n} experts per token of only {experts}": "每个词元 {n} 个专家，但总共只有 {experts} 个",
    # the workload (core/workload.py) as the app's controls set it
    "must be one of {choices}, got {value}": "必须是以下之一：{choices}，实际为 {value}",
    "must be at least 1, got {value}": "至少为 1，实际为 {value}",
    "the model has no linear layer named {names}": "模型中没有名为 {names} 的全连接层",
    "unknown {names}; choose from {choices}": "未知的 {names}；可选：{choices}",
    # opening a file (importers)
    "no such file": "文件不存在",
    "not a regular file": "不是普通文件",
    "file is larger than 1 TiB": "文件大于 1 TiB",
    "not a model spec; use zoo:NAME or a model file ({forms}; `advisor estimate --list` shows the zoo)":
        "不是模型描述；请使用 zoo:名称 或模型文件（{forms}；`advisor estimate --list` 列出模型库）",
    "needs the {package} package ({install})": "需要 {package} 包（{install}）",
    "cannot be imported as a Python module": "无法作为 Python 模块导入",
    "defines no {name}() function (a model file needs build_model() and example_inputs(batch_size))":
        "没有定义 {name}() 函数（模型文件需要 build_model() 和 example_inputs(batch_size)）",
    "build_model() failed: {reason}": "build_model() 失败：{reason}",
    "build_model() returned {kind}, not a torch.nn.Module": "build_model() 返回了 {kind}，而不是 torch.nn.Module",
    "example_inputs({batch}) failed: {reason}": "example_inputs({batch}) 失败：{reason}",
    "example_inputs must return a tuple, dict or tensor, got {kind}":
        "example_inputs 必须返回元组、字典或张量，实际为 {kind}",
    "example_inputs gave no tensors": "example_inputs 没有给出任何张量",
    "forward pass failed: {reason}": "前向计算失败：{reason}",
    "forward pass failed {where}: {reason}": "前向计算失败（{where}）：{reason}",
    "the forward pass returned no tensor ({kind})": "前向计算没有返回张量（{kind}）",
    "building the model failed: {reason}": "构建模型失败：{reason}",
    "the simulated step failed in the {where}: {reason}": "模拟的训练步在{where}失败：{reason}",
    "running it failed: {reason}": "运行失败：{reason}",
    "cannot be loaded: {reason}": "无法加载：{reason}",
    "TASK must be one of {choices}, got {task}": "TASK 必须是以下之一：{choices}，实际为 {task}",
    "loss_fn is not a function": "loss_fn 不是函数",
    "holds only weights (a state_dict): no architecture to run; give a FILE.py whose build_model() builds it":
        "只含权重（state_dict），没有可运行的结构；请提供一个由 build_model() 构建该模型的 FILE.py",
    "holds a {kind}, not a model (torch.nn.Module)": "其中是 {kind}，而不是模型（torch.nn.Module）",
    "holds no tensors ({kind}); not a state_dict": "不含张量（{kind}），不是 state_dict",
    "not a readable torch file (truncated or another format): {reason}":
        "不是可读取的 torch 文件（已截断或是其他格式）：{reason}",
    "it holds pickled Python objects, which run code when loaded":
        "其中含有 pickle 序列化的 Python 对象，加载时会运行代码",
    "not a torch model file (expected one of {suffixes})": "不是 torch 模型文件（应为以下之一：{suffixes}）",
    "not {what}: not a zip archive (truncated or another format)": "不是{what}：不是 zip 压缩包（已截断或是其他格式）",
    "not a loadable torch.export archive: {reason}": "不是可加载的 torch.export 归档：{reason}",
    "not a loadable TorchScript archive: {reason}": "不是可加载的 TorchScript 归档：{reason}",
    "not a readable ONNX model (truncated or another format): {reason}":
        "不是可读取的 ONNX 模型（已截断或是其他格式）：{reason}",
    "unsupported or damaged ONNX graph: {reason}": "不支持或已损坏的 ONNX 图：{reason}",
    "the graph has no inputs besides its weights": "该图除权重外没有输入",
    "not a safetensors file: shorter than its 8-byte header length": "不是 safetensors 文件：比 8 字节的头长度还短",
    "damaged safetensors header: not a JSON object": "safetensors 头已损坏：不是 JSON 对象",
    "damaged safetensors header: not valid UTF-8 JSON": "safetensors 头已损坏：不是有效的 UTF-8 JSON",
    "damaged safetensors header: tensors overlap": "safetensors 头已损坏：张量相互重叠",
    "no config.json beside it, so the architecture is unknown ({n} parameters in the file)":
        "旁边没有 config.json，因此结构未知（文件中有 {n} 个参数）",
    "not a GGUF file (it does not start with 'GGUF')": "不是 GGUF 文件（开头不是 'GGUF'）",
    "GGUF version {version} is not supported (2 and 3 are)": "不支持 GGUF 版本 {version}（支持 2 和 3）",
    "GGUF metadata has no general.architecture": "GGUF 元数据中没有 general.architecture",
    "config has no model_type (a transformers config.json names one)":
        "配置中没有 model_type（transformers 的 config.json 会写明）",
    "a model config must be a JSON object": "模型配置必须是 JSON 对象",
    "transformers cannot read this config: {reason}": "transformers 无法读取此配置：{reason}",
    "transformers cannot build this model: {reason}": "transformers 无法构建此模型：{reason}",
    "seq_len {n} is more than the model's {most} positions": "seq_len {n} 超过了模型的 {most} 个位置",
    "import cancelled": "已取消导入",
    "running the saved model did not finish within {s} s; the file may be damaged":
        "运行保存的模型在 {s} 秒内没有结束；文件可能已损坏",
    "reading it did not finish within {s} s; the file may be damaged or hostile":
        "读取在 {s} 秒内没有结束；文件可能已损坏或带有恶意",
    "give a name after '{prefix}:'": "请在 '{prefix}:' 后给出名称",
    "torchvision has no model {name}": "torchvision 中没有模型 {name}",
    "timm has no model {name}": "timm 中没有模型 {name}",
    "only PyTorch modules (FILE.py, torchvision:, timm:, hf:) can be simulated; use --method analytic":
        "只有 PyTorch 模块（FILE.py、torchvision:、timm:、hf:）可以模拟；请改用解析估算",
    "unknown zoo model {name}": "模型库中没有模型 {name}",
}
