"""The README's Python example runs as written and prints what its comments say."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_python_example_runs(capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert len(blocks) == 1
    code = blocks[0]
    assert len([line for line in code.splitlines() if line.strip()]) <= 12
    exec(compile(code, "README.md", "exec"), {})
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "0.1667 [0.0139 0.2898]"
    assert out[1] == "0.4"
    assert out[2] == "Allocation(m0=136, m1=64)"
