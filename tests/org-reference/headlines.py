"""The headlines of every *.org file under a directory, as orgparse reads them: the independent
reference the memory store is compared with (tests/all/org_corpus.rs).

Prints one JSON object per headline and line: file (relative, with `/`), line (1-based),
level, title (as written: links and markup kept), todo, tags (the headline's own), properties (the drawer orgparse finds, values
as text), id. orgparse turns `Effort` into minutes; the text is what Org keeps, so it is
printed as written.
"""

import json
import sys
from pathlib import Path

import orgparse


def main(root: Path) -> None:
    for path in sorted(root.rglob("*.org")):
        doc = orgparse.load(str(path))
        rel = path.relative_to(root).as_posix()
        for node in doc[1:]:
            properties = {}
            for key, value in node.properties.items():
                properties[key] = value if isinstance(value, str) else raw_value(node, key)
            print(
                json.dumps(
                    {
                        "file": rel,
                        "line": node.linenumber,
                        "level": node.level,
                        "title": node.get_heading(format="raw"),
                        "todo": node.todo,
                        "tags": sorted(node.shallow_tags),
                        "properties": properties,
                        "id": properties.get("ID"),
                    },
                    ensure_ascii=False,
                )
            )


def raw_value(node, key: str) -> str:
    prefix = f":{key}:"
    for line in str(node).splitlines():
        stripped = line.strip()
        if stripped.startswith(prefix):
            return stripped[len(prefix):].strip()
    return ""


if __name__ == "__main__":
    main(Path(sys.argv[1]))
