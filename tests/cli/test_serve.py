"""``rsep serve``'s command line (:mod:`rsep.cli.serve`): its options reach the service's
settings, and what would expose the service or name a missing file is refused before it
listens."""

from __future__ import annotations

from pathlib import Path

import pytest

from rsep.cli import main as cli
from rsep.cli.serve import settings_of


def test_options_reach_the_settings(tmp_path: Path) -> None:
    args = cli.build_parser().parse_args(
        [
            "serve",
            "--port",
            "9",
            "--state",
            str(tmp_path),
            "--token",
            "t",
            "--allow",
            "a",
            "--allow",
            "kafka://h:1",
            "--max-body",
            "10",
            "--rate",
            "0",
            "--max-runs",
            "5",
            "--max-jump",
            "7",
            "--checkpoint-every",
            "0",
        ]
    )
    settings = settings_of(args)
    assert (settings.port, settings.state, settings.token) == (9, tmp_path, "t")
    assert settings.allow == ("a", "kafka://h:1")
    assert (settings.max_body, settings.rate, settings.max_runs) == (10, 0.0, 5)
    assert (settings.max_jump, settings.checkpoint_every) == (7, 0.0)


@pytest.mark.parametrize(
    ("options", "words"),
    [
        (["--host", "0.0.0.0"], "--token"),
        (["--allow", "/no/such/folder"], "no such file"),
        (["--max-body", "0"], "--max-body must be positive"),
        (["--rate", "-1"], "--rate"),
    ],
)
def test_refused_before_listening(
    options: list[str],
    words: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A public address without a token, an --allow that is not there, a bad limit: exit
    1 with the reason, nothing served."""
    monkeypatch.delenv("RSEP_TOKEN", raising=False)
    import uvicorn

    def no_serving(*_: object, **__: object) -> None:
        raise AssertionError("rsep serve started listening")

    monkeypatch.setattr(uvicorn, "run", no_serving)
    assert cli.main(["serve", *options]) == 1
    assert words in capsys.readouterr().err
