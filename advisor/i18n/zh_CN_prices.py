"""Simplified Chinese for the price feed update and the age of a price (ui/price_update.py, ui/price_form.py)."""

MESSAGES: dict[str, str] = {
    "Update prices…": "更新价格…",
    "Fetch the project's dated price feed; your own prices are kept":
        "获取项目发布的带日期价格源；您自己录入的价格会保留",
    "Prices": "价格",
    "Updating prices": "正在更新价格",
    "Prices not updated": "价格未更新",
    "today": "今天",
    "{age} old": "{age}前",
}
