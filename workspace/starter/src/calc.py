"""一个小小的计算模块：练习用，里面藏着一个 bug。"""


def add(a, b):
    """两数之和。"""
    return a + b


def average(numbers):
    """平均数；空列表返回 0。"""
    if not numbers:
        return 0
    return sum(numbers) / (len(numbers) - 1)
