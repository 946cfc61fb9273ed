"""The README's Python example runs as printed and prints what its comments say."""
import contextlib
import io
import os
import re

SOURCE = os.path.join(os.path.dirname(__file__), "..", "..")


def test_the_readme_python_example_prints_its_comments():
    readme = open(os.path.join(SOURCE, "README.md"), encoding="utf-8").read()
    section = readme.split("\n## Python\n", 1)[1].split("\n## ", 1)[0]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    expected = [line.split("# ", 1)[1].strip() for line in code.splitlines()
                if line.startswith("print(") and "# " in line]
    out = io.StringIO()
    cwd = os.getcwd()
    os.chdir(SOURCE)
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(code, "README.md", "exec"), {})
    finally:
        os.chdir(cwd)
    printed = [line.strip() for line in out.getvalue().splitlines()]
    assert printed == expected
