"""``harness``: files that run a release inside an evaluation harness (argument parsing and printing
only; the adapters are :mod:`medcalc_maintained.harnesses`)."""

from __future__ import annotations

from pathlib import Path

import typer

from medcalc_maintained.cli.common import console, fail, guarded_if_in_project

harness_app = typer.Typer(help="Files that run a release in the evaluation harness you already use: an lm-evaluation-harness "
                          "task directory, HELM's configuration of a local checkpoint.",
                          no_args_is_help=True)


@harness_app.command("lm-eval")
def lm_eval_command(
    out: Path = typer.Option(..., "--out", help="Directory to write the task YAMLs and utils.py into."),
    release: Path = typer.Option(None, "--release", help="A local release directory built by `release build` "
                                 "(`make run` builds the latest into build/release); runs offline."),
    revision: str = typer.Option(None, "--revision", help="A release tag on the Hub, e.g. v2.0 or v1.0.0 (with "
                                 "--release: the tag the directory must hold)."),
    dataset: str = typer.Option(None, "--dataset", help="The Hub repository of --revision (default "
                                "org/medcalc-maintained)."),
    force: bool = typer.Option(False, "--force", help="Replace the files of an existing task directory."),
) -> None:
    """Write an lm-evaluation-harness task directory for one release: tasks `medcalc_maintained`
    (config default), `medcalc_maintained_full` and `medcalc_maintained_mini`, each loading the
    release (a local directory, --release, or the Hub at a tag, --revision), sending our system and
    user messages, decoding greedily, and grading with our answer semantics. Then run `lm_eval --model
    hf --model_args pretrained=MODEL --include_path OUT --tasks medcalc_maintained_mini
    --apply_chat_template` (required: the tasks refuse a plain-text prompt; needs the `lm-eval` extra)."""
    from medcalc_maintained.core.errors import DataError
    from medcalc_maintained.harnesses.common import DATASET, resolve_release
    from medcalc_maintained.harnesses.lm_eval_task import TASKS, write_task_dir

    dataset = dataset or DATASET
    try:
        guarded_if_in_project(out)
        files = write_task_dir(out, revision, release=release, dataset=dataset, force=force)
        rel = resolve_release(release, revision, dataset=dataset)
    except (DataError, ValueError, FileExistsError) as exc:
        fail(exc)
    console.print(f"wrote {len(files)} files to {out}: tasks {', '.join(TASKS.values())} of release {rel.version} "
                  f"({rel.source}); run lm_eval with --include_path {out} --apply_chat_template", highlight=False)


@harness_app.command("helm-model")
def helm_model_command(
    model: Path = typer.Argument(..., help="A local Hugging Face checkpoint directory (config.json, tokenizer files)."),
    out: Path = typer.Option(Path("runs/prod_env"), "--out", help="HELM's local configuration folder, for helm-run "
                             "--local-path (default runs/prod_env: runs/ holds what the harness commands write, "
                             "and git ignores it)."),
    name: str = typer.Option(None, "--name", help="The model and deployment name for --run-entries "
                             "(default local/<MODEL's folder name>)."),
    dtype: str = typer.Option("float32", "--dtype", help="The dtype HELM loads the weights in: float32, bfloat16 "
                              "or float16. Give every harness you compare the same one."),
    force: bool = typer.Option(False, "--force", help="Replace an earlier folder of this command (and HELM's "
                               "request cache in it, which is keyed by the request, not the weights)."),
) -> None:
    """Write HELM's configuration of a local checkpoint (model_metadata.yaml, tokenizer_configs.yaml,
    model_deployments.yaml) with the dtype set, for `helm-run --plugins
    medcalc_maintained.harnesses.helm_run_spec --run-entries "medcalc_maintained:...,model=NAME"`.
    HELM's own --enable-local-huggingface-models loads the checkpoint's dtype (bfloat16 for SmolLM2),
    where its temperature-0 sampling breaks the many ties of bfloat16 logits at random."""
    from medcalc_maintained.core.errors import DataError
    from medcalc_maintained.harnesses.helm_model import write_model_dir

    try:
        guarded_if_in_project(out)
        files = write_model_dir(out, model, name=name, dtype=dtype, force=force)
    except (DataError, ValueError) as exc:
        fail(exc)
    deployment = name or f"local/{model.resolve().name}"
    console.print(f"wrote {len(files)} files to {out}: model {deployment} ({model.resolve()}, {dtype}); run helm-run "
                  f"with --local-path {out} and model={deployment} in --run-entries", highlight=False)


def register(app: typer.Typer) -> None:
    app.add_typer(harness_app, name="harness")
