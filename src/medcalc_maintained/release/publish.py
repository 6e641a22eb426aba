"""Publishing a built release: one commit with its files, tagged ``vMAJOR.MINOR.PATCH`` (and
``vMAJOR.MINOR`` for the first release of a minor line), to a bare git repository
(``file:///path/repo.git``) or a Hugging Face dataset repository (``hf://ORG/NAME``).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from medcalc_maintained.core import git
from medcalc_maintained.core.errors import DataError
from medcalc_maintained.core.versions import from_tag, full_tag, short_tag, version_key
from medcalc_maintained.release.layout import MANIFEST, draft_evidence, read_manifest, verify_manifest
from medcalc_maintained.release.semver import publish_problem

BRANCH = "refs/heads/main"  # the branch every publish writes, whatever the target's HEAD says


class PublishRefused(DataError):
    """Publishing was refused before anything was written."""


@dataclass
class Target:
    scheme: str  # "hf" | "file"
    location: str  # repo id or absolute path

    @classmethod
    def parse(cls, text: str) -> "Target":
        if text.startswith("hf://"):
            repo = text[len("hf://"):].strip("/")
            if not re.fullmatch(r"[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*", repo):
                raise DataError("--target", f"{text!r}: expected hf://ORG/NAME")
            return cls("hf", repo)
        if text.startswith("file://"):
            path = text[len("file://"):]
            if not path.startswith("/"):
                raise DataError("--target", f"{text!r}: expected file:///absolute/path/repo.git")
            return cls("file", path)
        raise DataError("--target", f"{text!r}: expected hf://ORG/NAME or file:///path/repo.git")

    def __str__(self) -> str:
        return f"{self.scheme}://{self.location}" if self.scheme == "hf" else f"file://{self.location}"


@dataclass
class PublishResult:
    target: str
    version: str
    tags: list[str]
    actions: list[str]
    dry_run: bool
    commit: str | None = None
    notes: list[str] = field(default_factory=list)


def contract_problems(contracts: Any) -> tuple[list[str], list[str]]:
    """(problems, notes) of ``contracts``, the data contracts' report on a built release that the
    caller ran (``contracts.validate.validate_release``; its ``success``, ``failures`` and the
    ``blocking`` ones among them)."""
    problems: list[str] = []
    notes: list[str] = []
    failures = list(getattr(contracts, "failures", []) or [])
    blocking = list(getattr(contracts, "blocking", failures))
    if not contracts.success:
        problems += [f"contract: {f}" for f in (blocking or ["validation failed"])]
    warnings = [f for f in failures if f not in blocking]
    if warnings:
        notes.append(warnings_note(warnings))
    return problems, notes


def warnings_note(warnings: list[Any]) -> str:
    """The note on N non-blocking contract warnings: it names each of the N (suite, expectation
    and what it observed), one per line, in the order validate reports them."""
    lines = [f"  {n}. {w.message()}" for n, w in enumerate(warnings, start=1)]
    return (f"{len(warnings)} non-blocking contract warning(s) (`medcalc-maintained validate DIR` shows them "
            "with their Data Docs):\n" + "\n".join(lines))


def _version_tags(names: Iterable[str]) -> list[str]:
    return sorted((v for n in names if n.startswith("v") and (v := from_tag(n))), key=version_key)


def _plan_tags(version: str, existing: set[str], where: str) -> tuple[list[str], list[str]]:
    tag = full_tag(version)
    if tag in existing:
        raise PublishRefused(where, f"tag {tag} already exists; tags are never moved or overwritten")
    published = _version_tags(existing)
    if published and version_key(published[-1]) > version_key(version):
        raise PublishRefused(where, f"v{published[-1]} is already published; {tag} would move the branch backwards")
    short = short_tag(version)
    notes = []
    tags = [tag]
    if short in existing:
        notes.append(f"{short} already marks the first release of {short[1:]}; it is not moved")
    else:
        tags.append(short)
    return tags, notes


def _file_refs(git_dir: Path) -> dict[str, str]:
    out = {}
    for line in git.text("for-each-ref", "--format=%(refname) %(objectname)", git_dir=git_dir).splitlines():
        name, sha = line.split(" ", 1)
        out[name] = sha
    return out


def _commit_env(date: str, index: Path) -> dict[str, str]:
    """Author, committer and date fixed by the release, so a publish is reproducible."""
    stamp = f"{date} 00:00:00 +0000"
    who = "medcalc-maintained release"
    mail = "release@medcalc-maintained.invalid"
    return git.clean_env(GIT_AUTHOR_NAME=who, GIT_AUTHOR_EMAIL=mail, GIT_COMMITTER_NAME=who, GIT_COMMITTER_EMAIL=mail,
                         GIT_AUTHOR_DATE=stamp, GIT_COMMITTER_DATE=stamp, GIT_INDEX_FILE=str(index))


def _commit_release(repo: Path, release_dir: Path, man: dict[str, Any], head: str, parent: str | None,
                    tags: list[str]) -> str:
    """One commit of the files of ``release_dir`` on ``head``, and its tags, in one ref transaction."""
    with tempfile.TemporaryDirectory(prefix="medcalc-publish-") as tmp:
        env = _commit_env(man["date"], Path(tmp) / "index")
        git.git(f"--work-tree={release_dir}", "add", "--all", "--force", ".", git_dir=repo, env=env)
        tree = git.text("write-tree", git_dir=repo, env=env)
        message = f"Release {man['version']} ({man['kind']})\n\n{man.get('description') or ''}".rstrip() + "\n"
        commit = git.text("commit-tree", tree, *(["-p", parent] if parent else []), git_dir=repo, env=env,
                          input=message.encode())
        lines = ["start", f"update {head} {commit} {parent or '0' * 40}"]
        lines += [f"create refs/tags/{t} {commit}" for t in tags]
        lines += ["prepare", "commit", ""]
        git.git("update-ref", "--stdin", git_dir=repo, env=env, input="\n".join(lines).encode())
    return commit


def _publish_file(release_dir: Path, target: Target, man: dict[str, Any], dry_run: bool, say: Callable[[str], None],
                  gate: Callable[[], list[str]]) -> PublishResult:
    repo = Path(target.location)
    version = man["version"]
    exists = repo.exists()
    if exists:
        bare = git.git("rev-parse", "--is-bare-repository", git_dir=repo, check=False).stdout.decode().strip()
        if not (repo / "HEAD").is_file() or not (repo / "objects").is_dir() or bare != "true":
            raise PublishRefused(repo, "exists but is not a bare git repository (a working copy's .git is never a "
                                       "target; create one with `git init --bare`)")
        refs = _file_refs(repo)
        head = git.git("symbolic-ref", "-q", "HEAD", git_dir=repo, check=False).stdout.decode().strip()
    else:
        refs, head = {}, BRANCH
    tags_present = {r[len("refs/tags/"):] for r in refs if r.startswith("refs/tags/")}
    tags, notes = _plan_tags(version, tags_present, str(repo))
    problem = publish_problem(man, release_dir, tags_present,
                              lambda tag, f: git.git("cat-file", "blob", f"refs/tags/{tag}:{f}", git_dir=repo).stdout)
    if problem:
        raise PublishRefused(repo, problem)
    parent = refs.get(BRANCH)
    branch = BRANCH[len("refs/heads/"):]
    actions = ([] if exists else [f"create bare git repository {repo} (branch {branch})"])
    actions.append(f"commit {len(man['files']) + 1} files of release {version} on {branch}"
                   + (f" (parent {parent[:12]})" if parent else f" (first commit of {branch})"))
    if head != BRANCH:
        actions.append(f"point HEAD at {branch} (it was {head or 'detached'})")
        notes.append(f"{repo}: HEAD was {head or 'detached'}; releases are on branch {branch}, HEAD now points at it")
    actions += [f"create tag {t}" for t in tags]
    result = PublishResult(str(target), version, tags, actions, dry_run, notes=gate() + notes)
    if dry_run:
        return result
    created = False
    try:
        if not exists:
            repo.parent.mkdir(parents=True, exist_ok=True)
            git.git("init", "--bare", "-q", "-b", "main", str(repo), env=git.clean_env())
            created = True
        result.commit = _commit_release(repo, release_dir, man, BRANCH, parent, tags)
        if head != BRANCH:
            git.git("symbolic-ref", "HEAD", BRANCH, git_dir=repo)
        say(f"committed {result.commit[:12]} and tagged {', '.join(tags)}")
        return result
    except BaseException:
        if created:
            shutil.rmtree(repo, ignore_errors=True)
        raise


def _hub_error(exc: Exception) -> str:
    """A one-line description of a Hub error without secrets (the token is never part of it)."""
    from medcalc_maintained.core.redact import redact

    first = (redact(exc).strip().splitlines() or [""])[0]
    return f"{type(exc).__name__}: {first}"[:300]


def _hub_file(api: Any, target: Target, tag: str, path: str) -> bytes:
    """One file of the dataset repository at ``tag``, downloaded into a private directory that is
    removed at once: what the Hub answered (it may echo the token) never stays in the shared
    ``HF_HOME`` cache."""
    with tempfile.TemporaryDirectory(prefix="medcalc-hub-") as tmp:
        try:
            local = api.hf_hub_download(target.location, path, repo_type="dataset", revision=tag,
                                        cache_dir=str(Path(tmp) / "cache"))
            return Path(local).read_bytes()
        except Exception as exc:
            raise PublishRefused(str(target), f"cannot read {path} at {tag} ({_hub_error(exc)})") from None


def _publish_hf(release_dir: Path, target: Target, man: dict[str, Any], dry_run: bool, say: Callable[[str], None],
                gate: Callable[[], list[str]]) -> PublishResult:
    from huggingface_hub import HfApi
    from huggingface_hub.errors import RepositoryNotFoundError

    token = os.environ.get("HF_TOKEN") or None
    if token is None and not dry_run:
        raise PublishRefused("HF_TOKEN", "is not set: a write token is needed to publish to the Hub")
    api = HfApi(token=token)
    version = man["version"]
    notes: list[str] = []
    try:
        refs = api.list_repo_refs(target.location, repo_type="dataset")
        existing = {t.name for t in refs.tags}
        exists = True
    except RepositoryNotFoundError:
        existing, exists = set(), False
    except Exception as exc:  # network or Hub errors: say which, never the token
        raise PublishRefused(str(target), f"cannot list the tags of the dataset repository ({_hub_error(exc)})") from None
    tags, tag_notes = _plan_tags(version, existing, str(target))
    notes += tag_notes
    problem = publish_problem(man, release_dir, existing, lambda tag, f: _hub_file(api, target, tag, f))
    if problem:
        raise PublishRefused(str(target), problem)
    actions = ([] if exists else [f"create dataset repository {target.location}"])
    actions.append(f"upload {len(man['files']) + 1} files of release {version} to main (files not in the release are deleted)")
    actions += [f"create tag {t}" for t in tags]
    result = PublishResult(str(target), version, tags, actions, dry_run, notes=gate() + notes)
    if dry_run:
        return result
    try:
        if not exists:
            api.create_repo(target.location, repo_type="dataset", exist_ok=True)
        info = api.upload_folder(repo_id=target.location, folder_path=str(release_dir), repo_type="dataset",
                                 commit_message=f"Release {version} ({man['kind']})",
                                 commit_description=man.get("description") or None, delete_patterns="*",
                                 revision="main")
        commit = getattr(info, "oid", None)
        for t in tags:
            api.create_tag(target.location, tag=t, revision=commit, repo_type="dataset",
                           tag_message=f"medcalc-maintained {version}")
    except Exception as exc:
        raise DataError(str(target), f"publishing failed ({_hub_error(exc)})") from None
    result.commit = commit
    say(f"uploaded commit {str(commit)[:12]} and tagged {', '.join(tags)}")
    return result


def _check_against_plan(release_dir: Path, man: dict[str, Any], releases: Path) -> None:
    """Refuse a manifest whose version, kind, date or release list is not what ``releases.yaml``
    declares for it (the manifest is not covered by its own digests, so an edit would go unseen)."""
    from medcalc_maintained.release.plan import load_releases

    plan = load_releases(releases)
    version = str(man.get("version"))
    listed = {r.version: r for r in plan.releases}
    where = release_dir / MANIFEST
    if version not in listed:
        raise PublishRefused(where, f"version {version!r} is not a release of {releases} "
                                    f"(listed: {', '.join(listed)}); rebuild with `release build`")
    rel = listed[version]
    expected = {"kind": rel.kind, "date": str(rel.date), "releases": [r.version for r in plan.upto(version)]}
    wrong = [k for k, v in expected.items() if (str(man.get(k)) if k == "date" else man.get(k)) != v]
    if wrong:
        raise PublishRefused(where, f"field(s) {', '.join(wrong)} differ from release {version} of {releases}; "
                                    "rebuild with `release build`")


def preflight(release_dir: Path, target: str, releases: Path | None = None) -> dict[str, Any]:
    """The manifest of a release that may go to ``target``, checked before its data contracts run:
    refuses (:class:`PublishRefused`) a target other than ``hf://`` or ``file://``, a draft, and,
    with ``releases`` (releases.yaml), a manifest whose version, kind, date or release list is not
    what that file declares."""
    release_dir = Path(release_dir).resolve()
    Target.parse(target)
    man = read_manifest(release_dir)
    why = draft_evidence(release_dir, man)
    if why:
        raise PublishRefused(release_dir, f"is a draft of {man.get('version')} (`release build --draft`; {why}); "
                                          "add the release to releases.yaml and build it to publish")
    if releases is not None:
        _check_against_plan(release_dir, man, releases)
    return man


def publish(release_dir: Path, target: str, contracts: Callable[[], Any], *, dry_run: bool = False,
            say: Callable[[str], None] | None = None, releases: Path | None = None) -> PublishResult:
    """Publish a built release to ``hf://ORG/NAME`` or ``file:///path/repo.git``; ``contracts``
    is the caller's data-contract gate (e.g. ``lambda: validate_release(release_dir)``: this module
    does not import the contracts).

    The checks run cheapest first and all before anything is written: :func:`preflight` and the
    manifest's digests (local); the target, read only (an existing tag, a later version already
    published, an earlier release of releases.yaml not yet published, a declared kind that is not
    the derived bump); then ``contracts``. Each refusal raises :class:`PublishRefused`.
    """
    say = say or (lambda _m: None)
    release_dir = Path(release_dir).resolve()
    tgt = Target.parse(target)
    man = preflight(release_dir, target, releases)
    _refuse(release_dir, verify_manifest(release_dir))

    def gate() -> list[str]:
        problems, notes = contract_problems(contracts())
        _refuse(release_dir, problems)
        return notes

    fn = _publish_hf if tgt.scheme == "hf" else _publish_file
    return fn(release_dir, tgt, man, dry_run, say, gate)


def _refuse(release_dir: Path, problems: list[str]) -> None:
    if problems:
        shown = "; ".join(problems[:10]) + (f" (and {len(problems) - 10} more)" if len(problems) > 10 else "")
        raise PublishRefused(release_dir, f"validation failed, nothing published: {shown}")
