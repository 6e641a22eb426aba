"""tests/support/cli_command.py: ``CliRunner().invoke(app, ...)`` builds an app's click command once, and
again when the app's commands change; each invocation still parses its own arguments."""

from __future__ import annotations

import typer
import typer.testing

from tests.support import cli_command


def test_the_plugin_is_what_cli_runner_builds_commands_with():
    assert typer.testing._get_command is cli_command.command


def test_an_app_is_built_once_and_again_when_it_gains_a_command():
    app = typer.Typer()

    @app.command("hello")
    def hello(name: str = "world") -> None:
        print(f"hello {name}")

    @app.command("count")
    def count(n: int) -> None:
        print(",".join(str(i) for i in range(n)))

    runner = typer.testing.CliRunner()
    r = runner.invoke(app, ["hello", "--name", "ward"])
    assert (r.exit_code, r.output) == (0, "hello ward\n")
    built = cli_command.command(app)
    assert cli_command.command(app) is built  # kept
    # the same command, fresh arguments: nothing of the last invocation carries over
    assert runner.invoke(app, ["hello"]).output == "hello world\n"
    assert runner.invoke(app, ["count", "3"]).output == "0,1,2\n"
    assert runner.invoke(app, ["count", "x"]).exit_code == 2  # click's usage error, as without the cache

    @app.command("bye")
    def bye() -> None:
        print("bye")

    r = runner.invoke(app, ["bye"])  # a command added after the first build is found
    assert (r.exit_code, r.output) == (0, "bye\n")
    assert cli_command.command(app) is not built


def test_two_apps_keep_their_own_commands():
    first, second = typer.Typer(), typer.Typer()
    for app, word in ((first, "one"), (second, "two")):
        @app.command("say")
        def say(word: str = word) -> None:
            print(word)

        @app.command("other")
        def other() -> None:
            print("other")

    runner = typer.testing.CliRunner()
    assert [runner.invoke(a, ["say"]).output for a in (first, second, first)] == ["one\n", "two\n", "one\n"]
