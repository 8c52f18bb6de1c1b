"""The atheris fuzz run (issue #11, part 3): a fixed number of inputs per target, in subprocesses.

The targets (fuzz_targets.py) are the search-query parser, the front-matter reader and the
message framing with the params validation behind it. Each starts from a small seed corpus and
a dictionary of the tokens its format is made of, so the fuzzer reaches past the first byte;
it must finish every run with no crash.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from tests.reliability.figures import Figures, Scale

HEADING = "fuzzing (atheris)"
REPOSITORY = Path(__file__).resolve().parents[2]
"""Where `python -m tests.reliability.fuzz_targets` finds its module."""


def _frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


SEEDS: dict[str, list[bytes]] = {
    "query": [
        b"deploy staging",
        b'in:memories "make deploy" -flaky -"old way" type:user type:project name:dep*',
        b"name:deploy-steps x-ray sessions_daily",
        b'"unclosed -',
    ],
    "front-matter": [
        b"---\nname: deploy-steps\ndescription: How we deploy\ntype: project\n---\nmake deploy\n",
        b"---\ndescription: Note: colons break YAML\nmetadata:\n  type: user\n"
        b"  originSessionId: 5f0c-11\n  modified: 2026-10-01\n---\nbody\n",
        b"# Release checklist\n\nTag, then push.\n",
        b"---\nname: [unclosed\n---\n",
    ],
    "framing": [
        _frame(b'{"jsonrpc": "2.0", "id": 1, "method": "initialize"}'),
        _frame(
            b'{"jsonrpc": "2.0", "id": 2, "method": "lazy/memory/save", "params": '
            b'{"name": "a", "type": "user", "description": "d", "body": "b"}}'
        ),
        _frame(b"{not json}") + _frame(b"[]"),
        b'Content-Length: 99999999\r\nContent-Type: x\r\n\r\n{"jsonrpc"',
    ],
}
TOKENS: dict[str, list[bytes]] = {
    "query": [b"in:", b"type:", b"name:", b"memories", b'"', b"-", b"*", b" ", b"\n", b"\x00"],
    "front-matter": [
        b"---",
        b"\n",
        b"name: ",
        b"description: ",
        b"type: ",
        b"metadata:\n  ",
        b"originSessionId: ",
        b"modified: ",
        b"|",
        b"&a ",
        b"*a",
        b"[",
        b"{",
        b"'",
        b'"',
        b"!!",
    ],
    "framing": [
        b"Content-Length: ",
        b"\r\n",
        b"\r\n\r\n",
        b'"jsonrpc": "2.0"',
        b'"id": ',
        b'"method": ',
        b'"params": ',
        b'"lazy/memory/save"',
        b'"lazy/storage/save_record"',
        b'"result"',
        b'"error"',
        b"99999999999",
        b"-1",
        b"\\ud800",
    ],
}
RUNS = {
    "query": (8_000, 200_000),
    "front-matter": (15_000, 300_000),
    "framing": (15_000, 1_000_000),
}
"""Inputs per target: (fast, full)."""


def test_the_fuzzer_finds_no_crash_in_the_parser_the_reader_or_the_framing(
    scale: Scale, figures: Figures, tmp_path: Path
) -> None:
    runs = {target: scale.pick(*counts) for target, counts in RUNS.items()}
    fuzzing = {}
    for target, count in runs.items():
        corpus = tmp_path / target / "corpus"
        corpus.mkdir(parents=True)
        for number, seed in enumerate(SEEDS[target]):
            (corpus / f"seed-{number}").write_bytes(seed)
        dictionary = tmp_path / target / "tokens.dict"
        dictionary.write_text("".join(f'"{_escaped(token)}"\n' for token in TOKENS[target]))
        log = (tmp_path / f"{target}.log").open("wb")
        fuzzing[target] = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "tests.reliability.fuzz_targets",
                target,
                f"-runs={count}",
                f"-dict={dictionary}",
                f"-artifact_prefix={tmp_path / target}/",
                "-timeout=20",
                "-print_final_stats=1",
                str(corpus),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=REPOSITORY,
        )
    for target, process in fuzzing.items():
        status = process.wait(timeout=scale.pick(600, 7_200))
        log_text = (tmp_path / f"{target}.log").read_text(errors="replace")
        crashes = sorted(path.name for path in (tmp_path / target).glob("crash-*"))
        assert status == 0, f"{target}: the fuzzer found a crash {crashes}:\n{log_text[-4000:]}"
        assert crashes == []
        done = re.search(r"Done (\d+) runs in (\d+) second", log_text)
        assert done is not None, log_text[-2000:]
        assert int(done[1]) == runs[target]
        coverage = re.findall(r"cov: (\d+)", log_text)
        figures.add(
            HEADING,
            f"{target}: {int(done[1]):,} inputs in {done[2]} s, {coverage[-1]} edges covered, "
            "0 crashes",
        )


def _escaped(token: bytes) -> str:
    """A token as a libFuzzer dictionary writes it: printable ASCII, else \\xNN."""
    return "".join(
        chr(byte) if 0x20 <= byte < 0x7F and byte not in b'"\\' else f"\\x{byte:02x}"
        for byte in token
    )


def test_the_seeds_are_what_the_targets_expect() -> None:
    first = json.loads(SEEDS["framing"][0].split(b"\r\n\r\n", 1)[1])
    assert first["method"] == "initialize"
    for seed in SEEDS["framing"][:2]:
        header, body = seed.split(b"\r\n\r\n", 1)
        assert int(header.split(b": ")[1]) == len(body)
