"""本地的 OpenAI 兼容服务：把离线规则模型包装成 HTTP 接口，只监听 127.0.0.1。任何客户端都能连：

    python code/offline_server.py --port 8765
    # base_url = "http://127.0.0.1:8765/v1"（openai）或 "http://127.0.0.1:8765/api/paas/v4"（zhipuai）
    python code/offline_server.py --accent deepseek            # 学某家平台的口音
    python code/offline_server.py --help                       # 全部选项

服务本身不是课程代码，在项目根目录的 offline/ 包里（offline/server.py，口音在 offline/accents.py）；
这个文件只是启动它的入口。
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))   # 项目根目录：找到 import_paths.py
from import_paths import use_project_paths  # noqa: E402

use_project_paths()                   # 路径的先后只在 import_paths.py 里规定：code/ 第一，项目根目录第二
from offline.server import OfflineServer, main  # noqa: E402,F401

if __name__ == "__main__":
    main()
