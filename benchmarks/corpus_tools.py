"""A corpus of 36 varied tool functions for the schema-generation benchmark.

Mixed the way real tool modules are: one-line and multi-section docstrings (Google, NumPy, reST),
no docstring, Annotated descriptions, Literal, Enum, Optional, unions, containers, dates, dataclasses,
TypedDict, pydantic models (one recursive), pydantic Field constraints and an async tool.
`typing_extensions.TypedDict` is used because pydantic (and so LangChain and openai-agents) reject
`typing.TypedDict` on Python 3.11; the registry accepts both.
"""
import dataclasses
import datetime
import enum
from typing import Annotated, Any, Literal, Optional, Union

from pydantic import BaseModel, Field
from typing_extensions import NotRequired, TypedDict


class Unit(enum.Enum):
    CELSIUS = "c"
    FAHRENHEIT = "f"


class Priority(enum.IntEnum):
    LOW = 1
    MEDIUM = 2
    HIGH = 3


@dataclasses.dataclass
class Point:
    x: float
    y: float


@dataclasses.dataclass
class Filter:
    field: str
    op: Literal["eq", "lt", "gt"] = "eq"
    value: str = ""


class Contact(TypedDict):
    name: str
    phone: NotRequired[str]


class Address(BaseModel):
    city: str = Field(description="城市")
    street: str
    zip_code: str = Field(pattern=r"^\d{6}$")


class Category(BaseModel):
    name: str
    children: list["Category"] = []


def get_weather(city: str) -> str:
    """查询指定城市的当前天气。"""


def get_forecast(city: str, days: int = 3, unit: Literal["c", "f"] = "c") -> list:
    """查询未来几天的天气预报。

    Args:
        city: 城市名，如 北京
        days: 预报天数，1~7
        unit: 温度单位
    """


def convert_temperature(value: float, to: Unit) -> float:
    """Convert a temperature.

    Args:
        value: The temperature value.
        to: Target unit.
    """


def calculate(expression: Annotated[str, "算式，如 (3+4)*5"]) -> str:
    """计算一个四则运算算式。"""


def search_docs(query: str, limit: int = 10, offset: int = 0, lang: Optional[str] = None) -> list:
    """Search the documentation.

    Args:
        query: Words to look for.
        limit: Maximum number of hits.
        offset: Hits to skip.
        lang: Restrict to one language.
    """


def send_email(to: list[str], subject: str, body: str, cc: list[str] | None = None, urgent: bool = False) -> str:
    """Send an e-mail.

    Parameters
    ----------
    to : list of str
        Recipients.
    subject : str
        Subject line.
    body : str
        Plain-text body.
    cc : list of str, optional
        Copies.
    urgent : bool
        Mark as urgent.
    """


def create_event(title: str, start: datetime.datetime, end: datetime.datetime, attendees: list[str] = []) -> dict:
    """Create a calendar event.

    :param title: Event title.
    :param start: Start time.
    :param end: End time.
    :param attendees: Who is invited.
    """


def book_room(room: str, day: datetime.date, hours: tuple[int, int]) -> bool:
    """预订会议室。

    Args:
        room: 会议室编号
        day: 日期
        hours: 开始和结束的整点
    """


def set_priority(task_id: int, priority: Priority) -> None:
    """Change a task's priority."""


def tag_items(ids: set[int], tags: frozenset[str]) -> int:
    """Add tags to items.

    Args:
        ids: Item ids.
        tags: Tags to add.
    """


def update_settings(values: dict[str, Union[int, str, bool]]) -> dict:
    """Update settings with a mapping of name to value."""


def distance(a: Point, b: Point) -> float:
    """两点之间的距离。

    Args:
        a: 起点
        b: 终点
    """


def query_table(table: str, filters: list[Filter] = [], order_by: Optional[str] = None) -> list:
    """Query a table.

    Args:
        table: Table name.
        filters: Conditions, all must hold.
        order_by: Column to sort by.
    """


def add_contact(contact: Contact, groups: list[str] = []) -> str:
    """Add an address-book entry.

    Args:
        contact: Name and phone.
        groups: Groups to add to.
    """


def ship_order(order_id: str, address: Address, express: bool = False) -> str:
    """Ship an order.

    Args:
        order_id: Order number.
        address: Delivery address.
        express: Use express delivery.
    """


def create_category(category: Category) -> str:
    """Create a category tree.

    Args:
        category: The root category with its children.
    """


def resize_image(width: Annotated[int, Field(ge=1, le=4096, description="宽度（像素）")],
                 height: Annotated[int, Field(ge=1, le=4096, description="高度（像素）")],
                 keep_ratio: bool = True) -> str:
    """缩放图片。"""


def register_user(username: Annotated[str, Field(min_length=3, max_length=20, pattern=r"^[a-z0-9_]+$")],
                  age: Annotated[int, Field(ge=0)]) -> str:
    """Register a user.

    Args:
        username: Login name.
        age: Age in years.
    """


async def fetch_page(url: str, timeout: float = 10.0) -> str:
    """Fetch a web page.

    Args:
        url: Address to fetch.
        timeout: Seconds to wait.
    """


def translate(text: str, source: Literal["zh", "en", "ja", "fr"] = "zh", target: Literal["zh", "en", "ja", "fr"] = "en") -> str:
    """翻译一段文字。

    Args:
        text: 原文
        source: 源语言
        target: 目标语言
    """


def list_files(path: str = ".", pattern: str = "*", recursive: bool = False, max_depth: int | None = None) -> list:
    """List files.

    Parameters
    ----------
    path : str
        Folder to list.
    pattern : str
        Glob pattern.
    recursive : bool
        Descend into sub-folders.
    max_depth : int, optional
        Depth limit.
    """


def read_file(path: str, start_line: int = 1, end_line: Optional[int] = None) -> str:
    """Read part of a text file.

    :param path: File to read.
    :param start_line: First line, 1-based.
    :param end_line: Last line, inclusive.
    """


def write_file(path: str, content: str, append: bool = False) -> str:
    """Write text to a file.

    Args:
        path: File to write.
        content: Text to write.
        append: Append instead of overwrite.
    """


def edit_file(path: str, old: str, new: str, count: int = 1) -> str:
    """Replace text in a file.

    Args:
        path: File to edit.
        old: Text to find.
        new: Replacement.
        count: Occurrences to replace.
    """


def run_command(command: str, timeout_seconds: int = 30, env: dict[str, str] | None = None) -> str:
    """Run a shell command.

    Args:
        command: The command line.
        timeout_seconds: Give up after this many seconds.
        env: Extra environment variables.
    """


def get_stock_price(symbol: str, market: Literal["SH", "SZ", "HK", "US"] = "US") -> float:
    """查询股票价格。"""


def exchange_rate(base: str, quote: str, on: Optional[datetime.date] = None) -> float:
    """Exchange rate between two currencies.

    Args:
        base: Currency to convert from, e.g. USD.
        quote: Currency to convert to, e.g. CNY.
        on: Day of the rate; today when omitted.
    """


def lookup_employee(name: Annotated[str, "员工姓名"], fields: list[Literal["部门", "职位", "工号", "入职年份"]] = []) -> dict:
    """按姓名查询员工档案。"""


def calculate_salary(name: str, month: int, bonus_rate: float = 0.1, include_tax: bool = True) -> dict:
    """计算月薪。

    Args:
        name: 员工姓名
        month: 月份，1~12
        bonus_rate: 奖金比例
        include_tax: 是否扣税
    """


def schedule_reminder(message: str, at: datetime.datetime, repeat: Literal["never", "daily", "weekly"] = "never",
                      channels: list[Literal["sms", "email", "app"]] = ["app"]) -> str:
    """Schedule a reminder.

    Args:
        message: What to say.
        at: When to say it.
        repeat: How often.
        channels: Where to send it.
    """


def plot_points(points: list[tuple[float, float]], title: str = "", color: str = "blue") -> str:
    """画散点图。

    Args:
        points: (x, y) 坐标列表
        title: 标题
        color: 颜色
    """


def summarize(text: str, max_words: int = 100, style: Literal["bullet", "paragraph"] = "paragraph") -> str:
    """Summarize a text."""


def geocode(address: str, country: str | None = None) -> tuple[float, float]:
    """把地址转换成经纬度。

    Args:
        address: 地址
        country: 国家，可选
    """


def create_invoice(customer: str, items: list[dict[str, Any]], currency: Literal["CNY", "USD"] = "CNY",
                   due: datetime.date | None = None, notes: str = "") -> dict:
    """Create an invoice.

    Parameters
    ----------
    customer : str
        Customer name.
    items : list of dict
        Line items.
    currency : str
        Currency code.
    due : date, optional
        Due date.
    notes : str
        Free text.
    """


def random_number(low: int = 0, high: int = 100) -> int:
    """Return a random integer between low and high."""


def ping() -> str:
    """Check that the service is alive."""


CORPUS = [ping, get_weather, get_forecast, convert_temperature, calculate, search_docs, send_email, create_event,
          book_room, set_priority, tag_items, update_settings, distance, query_table, add_contact, ship_order,
          create_category, resize_image, register_user, fetch_page, translate, list_files, read_file, write_file,
          edit_file, run_command, get_stock_price, exchange_rate, lookup_employee, calculate_salary,
          schedule_reminder, plot_points, summarize, geocode, create_invoice, random_number]
