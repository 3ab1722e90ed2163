"""The operator's deployment files, checked offline (no Docker engine needed).

docker-compose.yml must match the Compose spec, and everything it and the Dockerfile name must
exist: services, build stages, copied and mounted files, env files, commands (Celery app and
queues, gunicorn target and config, management commands) and the health-check URL. Compose
variables are resolved the way `docker compose` resolves them (`${VAR:-default}`), so a typo in
a default breaks these tests too. No database is used.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
COMPOSE_FILE = ROOT / "docker-compose.yml"
DOCKERFILE = ROOT / "Dockerfile"
ENV_EXAMPLE = ROOT / ".env.example"
APP_DIR = "/app"  # WORKDIR of the images: the repository root inside the container

EXPECTED_SERVICES = {"web", "worker", "compile-worker", "gpu-worker", "beat", "postgres", "redis", "cache", "migrate"}
# The services that run readers' kernels (issue 41): they get only what a judge worker uses, never a site secret.
JUDGE_SERVICES = ("compile-worker", "gpu-worker")
# The services the whole .env reaches: they sign, send mail, call Stripe, or migrate.
SITE_SERVICES = ("web", "worker", "migrate")
SETTINGS_OF = {"config.settings.prod": SITE_SERVICES + ("beat",), "config.settings.judge_worker": JUDGE_SERVICES}
REQUIRED_VARIABLES = {"SECRET_KEY", "ALLOWED_HOSTS", "POSTGRES_PASSWORD", "REDIS_PASSWORD"}
# Settings read from the environment that .env.example need not list: fixed by the image
# (Dockerfile ENV) or meaningful only in development.
NOT_FOR_OPERATORS = {"DEBUG", "VAR_DIR", "STATIC_ROOT", "MEDIA_ROOT"}


# --- Reading the files -----------------------------------------------------------------------

_INNERMOST = re.compile(r"\$\{([^{}$]*)\}")
_ESCAPED_DOLLAR = "\x00"


def interpolate(value, required_seen: set[str] | None = None, values: dict[str, str] | None = None):
    """Resolve compose variables as on a machine where only required ones are set, or, given `values` (an
    operator's .env), as compose resolves them with those.

    `${VAR:-default}` / `${VAR-default}` become the default, `${VAR:?msg}` / `${VAR}` a
    placeholder `<VAR>` (the operator's value), `$$` a literal `$`. Nested defaults resolve
    innermost first, as compose does.
    """
    if isinstance(value, dict):
        return {interpolate(k, required_seen, values): interpolate(v, required_seen, values) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate(v, required_seen, values) for v in value]
    if not isinstance(value, str):
        return value
    text = value.replace("$$", _ESCAPED_DOLLAR)

    def substitute(match: re.Match) -> str:
        expr = match.group(1)
        parsed = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?+])(.*))?", expr, re.S)
        assert parsed, f"unparseable compose variable ${{{expr}}} in {value!r}"
        name, op, arg = parsed.groups()
        if values and values.get(name):
            return arg if op in (":+", "+") else values[name]
        if op in (":-", "-"):
            return arg
        if op in (":?", "?") and required_seen is not None:
            required_seen.add(name)
        if op in (":+", "+"):
            return ""
        return f"<{name}>"

    previous = None
    while previous != text:
        previous, text = text, _INNERMOST.sub(substitute, text)
    assert "${" not in text, f"unbalanced compose variable in {value!r}"
    text = re.sub(r"\$([A-Za-z_][A-Za-z0-9_]*)", r"<\1>", text)  # bare $VAR
    return text.replace(_ESCAPED_DOLLAR, "$")


@pytest.fixture(scope="module")
def raw_compose() -> dict:
    assert COMPOSE_FILE.is_file(), "docker-compose.yml is missing at the repository root"
    return yaml.safe_load(COMPOSE_FILE.read_text())


@pytest.fixture(scope="module")
def compose(raw_compose) -> dict:
    return interpolate(raw_compose)


@pytest.fixture(scope="module")
def services(compose) -> dict:
    return compose["services"]


def dockerfile_instructions() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined, heredoc bodies skipped."""
    lines = DOCKERFILE.read_text().splitlines()
    instructions, current, heredoc_end = [], "", None
    for line in lines:
        if heredoc_end is not None:
            if line.strip() == heredoc_end:
                heredoc_end = None
            continue
        stripped = line.strip()
        if not current and (not stripped or stripped.startswith("#")):
            continue
        if current and stripped.startswith("#"):
            continue
        current += (" " if current else "") + stripped.rstrip("\\").strip()
        if stripped.endswith("\\"):
            continue
        heredoc = re.search(r"<<-?'?\"?([A-Z_]+)'?\"?", current)
        if heredoc:
            heredoc_end = heredoc.group(1)
        keyword, _, arguments = current.partition(" ")
        instructions.append((keyword.upper(), arguments.strip()))
        current = ""
    return instructions


def dockerfile_stages() -> set[str]:
    stages = set()
    for keyword, arguments in dockerfile_instructions():
        if keyword == "FROM":
            match = re.search(r"\s+AS\s+(\S+)\s*$", arguments, re.I)
            if match:
                stages.add(match.group(1))
    return stages


def exec_form(arguments: str) -> list[str]:
    assert arguments.startswith("["), f"use the exec (JSON) form, not a shell string: {arguments}"
    return yaml.safe_load(arguments)


def dockerignore_patterns() -> list[str]:
    path = ROOT / ".dockerignore"
    if not path.exists():
        return []
    return [line.strip() for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]


def _dockerignore_regex(pattern: str) -> re.Pattern:
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pattern[i] == "?":
            out, i = out + "[^/]", i + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return re.compile(out)


def is_dockerignored(relative: str) -> bool:
    """.dockerignore's rules, enough for our patterns: a path is excluded when it or a parent
    folder matches an exclusion (`*` within a name, `**` across folders) and no later `!`
    pattern re-includes it."""
    parts = Path(relative).parts
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    ignored = False
    for raw in dockerignore_patterns():
        negate = raw.startswith("!")
        regex = _dockerignore_regex(raw.lstrip("!").strip("/"))
        if any(regex.fullmatch(prefix) for prefix in prefixes):
            ignored = not negate
    return ignored


def repo_path(path: str) -> Path:
    """A path as a container sees it (absolute under /app, or relative to WORKDIR /app)."""
    if path.startswith(APP_DIR + "/"):
        path = path[len(APP_DIR) + 1 :]
    assert not path.startswith("/"), f"{path} is outside the application folder {APP_DIR}"
    return ROOT / path


def python_defines(module_file: Path, name: str) -> bool:
    tree = ast.parse(module_file.read_text())
    for node in tree.body:
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        elif (
            isinstance(node, (ast.FunctionDef, ast.ClassDef))
            and node.name == name
            or isinstance(node, (ast.Import, ast.ImportFrom))
            and any((a.asname or a.name) == name for a in node.names)
        ):
            return True
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return True
    return False


def module_file(dotted: str) -> Path:
    base = ROOT.joinpath(*dotted.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    raise AssertionError(
        f"module {dotted} does not exist in the repository (looked for {base}.py and {base}/__init__.py)"
    )


def option(argv: list[str], *names: str) -> str | None:
    for index, arg in enumerate(argv):
        for name in names:
            if arg == name and index + 1 < len(argv):
                return argv[index + 1]
            if name.startswith("--") and arg.startswith(name + "="):
                return arg.split("=", 1)[1]
    return None


def declared_queues() -> set[str]:
    from django.conf import settings

    queues = getattr(settings, "CELERY_TASK_QUEUES", None)
    if queues:
        return {getattr(queue, "name", queue) for queue in queues}
    names = getattr(settings, "CELERY_QUEUE_NAMES", None)
    if names:
        return set(names)
    pytest.fail("settings declare no Celery queues: expected CELERY_TASK_QUEUES (kombu Queues) or CELERY_QUEUE_NAMES")


def app_services(services: dict) -> dict:
    """Services that run this project's image (built from the repository)."""
    return {name: svc for name, svc in services.items() if "build" in svc}


def command_of(service: dict) -> list[str]:
    command = service.get("command")
    assert isinstance(command, list), "give commands in list (exec) form so that they can be checked"
    return [str(part) for part in command]


def healthcheck_urls(test: list[str] | str) -> list[str]:
    text = " ".join(test) if isinstance(test, list) else test
    return re.findall(r"https?://[^\s'\"]+", text)


# --- The Compose spec ------------------------------------------------------------------------


OVERRIDE_FILES = sorted((ROOT / "docker").glob("compose*.yml"))


def test_compose_files_validate_against_the_compose_spec():
    files = [COMPOSE_FILE, *OVERRIDE_FILES]
    result = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.compose-spec", *map(str, files)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, f"check-jsonschema rejected a compose file:\n{result.stdout}\n{result.stderr}"


@pytest.mark.parametrize("override", OVERRIDE_FILES, ids=lambda p: p.name)
def test_override_files_extend_existing_services_with_documented_variables(override, services):
    data = yaml.safe_load(override.read_text())
    unknown = set(data.get("services", {})) - set(services)
    assert not unknown, f"{override.name} overrides services that docker-compose.yml lacks: {sorted(unknown)}"
    documented = set(re.findall(r"^\s*#?\s*([A-Z][A-Z0-9_]*)=", ENV_EXAMPLE.read_text(), re.M))
    used = set(re.findall(r"(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)", yaml.safe_dump(data)))
    assert used <= documented, f"{override.name}: .env.example does not document {sorted(used - documented)}"


def test_no_obsolete_version_key_and_all_services_present(raw_compose, services):
    assert "version" not in raw_compose, "the `version:` key is obsolete in the Compose spec"
    missing = EXPECTED_SERVICES - set(services)
    assert not missing, f"services missing from docker-compose.yml: {sorted(missing)}"


def test_required_secrets_fail_loudly_when_missing(raw_compose):
    required: set[str] = set()
    interpolate(raw_compose, required)
    missing = REQUIRED_VARIABLES - required
    assert not missing, f"use ${{VAR:?message}} so that compose refuses to start without: {sorted(missing)}"


# --- Everything referenced exists ------------------------------------------------------------


def test_depends_on_names_existing_services_with_valid_conditions(services):
    conditions = {"service_started", "service_healthy", "service_completed_successfully"}
    for name, service in services.items():
        depends = service.get("depends_on", {})
        targets = depends if isinstance(depends, list) else list(depends)
        for target in targets:
            assert target in services, f"{name} depends on {target!r}, which is not a service"
            assert target != name, f"{name} depends on itself"
            if isinstance(depends, dict):
                condition = depends[target].get("condition", "service_started")
                assert condition in conditions, f"{name} -> {target}: unknown condition {condition!r}"
                if condition == "service_healthy":
                    assert "healthcheck" in services[target] and not services[target]["healthcheck"].get("disable"), (
                        f"{name} waits for {target} to be healthy, but {target} has no health check"
                    )


def test_migrations_run_once_before_the_application_starts(services):
    assert command_of(services["migrate"])[:3] == ["python", "manage.py", "migrate"]
    assert services["migrate"].get("restart", "no") == "no", "migrate is one-shot: it must not restart"
    assert services["migrate"]["depends_on"]["postgres"]["condition"] == "service_healthy"
    for name in ("web", "worker", "compile-worker", "beat"):
        condition = services[name].get("depends_on", {}).get("migrate", {}).get("condition")
        assert condition == "service_completed_successfully", f"{name} must start only after migrate succeeded"


def test_build_contexts_dockerfiles_and_targets_exist(services):
    stages = dockerfile_stages()
    built = app_services(services)
    assert {"web", "worker", "compile-worker", "gpu-worker", "beat", "migrate"} <= set(built), (
        "app services must build from the repo"
    )
    for name, service in built.items():
        build = service["build"] if isinstance(service["build"], dict) else {"context": service["build"]}
        context = (ROOT / build.get("context", ".")).resolve()
        assert context.is_dir(), f"{name}: build context {context} does not exist"
        dockerfile = context / build.get("dockerfile", "Dockerfile")
        assert dockerfile.is_file(), f"{name}: {dockerfile} does not exist"
        if "target" in build:
            assert build["target"] in stages, (
                f"{name}: build target {build['target']!r} is not a stage of the Dockerfile ({sorted(stages)})"
            )


def test_files_the_dockerfile_copies_exist_and_are_not_dockerignored():
    copied = 0
    for keyword, arguments in dockerfile_instructions():
        if keyword not in ("COPY", "ADD"):
            continue
        if "--from=" in arguments:
            continue  # copied from another stage, not from the repository
        words = exec_form(arguments) if arguments.startswith("[") else arguments.split()
        sources = [w for w in words if not w.startswith("--")][:-1]
        assert sources, f"{keyword} {arguments}: no source"
        for source in sources:
            copied += 1
            matches = list(ROOT.glob(source)) if source not in (".", "./") else [ROOT]
            assert matches, f"Dockerfile {keyword}s {source!r}, which is not in the repository"
            if source not in (".", "./"):
                assert not is_dockerignored(source), f"Dockerfile {keyword}s {source!r}, but .dockerignore excludes it"
    assert copied, "the Dockerfile copies nothing from the repository"


def test_files_the_containers_run_are_in_the_image():
    """Scripts and configs named by CMD/HEALTHCHECK/compose commands reach /app (not dockerignored)."""
    for path in ("docker/gunicorn.conf.py", "docker/healthcheck.py", "manage.py", "config/celery.py", "config/wsgi.py"):
        assert (ROOT / path).is_file(), f"{path} is missing"
        assert not is_dockerignored(path), f".dockerignore keeps {path} out of the image"
    assert is_dockerignored(".env"), ".dockerignore must keep .env (secrets) out of the image"
    assert is_dockerignored(".venv"), ".dockerignore must keep the local .venv out of the image"


def test_env_files_exist_or_are_optional(services):
    assert ENV_EXAMPLE.is_file(), ".env.example (the documented list of settings) is missing"
    for name, service in services.items():
        entries = service.get("env_file", [])
        entries = [entries] if isinstance(entries, (str, dict)) else entries
        for entry in entries:
            path, required = (entry, True) if isinstance(entry, str) else (entry["path"], entry.get("required", True))
            if required:
                # A fresh clone must have it: it is tracked (so never the gitignored .env).
                assert (ROOT / path).is_file(), f"{name}: env_file {path} does not exist (mark it `required: false`)"


def test_mounts_exist(compose, services):
    declared = set(compose.get("volumes") or {})
    for name, service in services.items():
        for volume in service.get("volumes", []):
            source = volume.get("source") if isinstance(volume, dict) else volume.split(":")[0]
            if isinstance(volume, str) and ":" not in volume:
                continue  # anonymous volume
            if source.startswith((".", "/", "~")):
                assert source.startswith("."), f"{name}: mount absolute host path {source} is not portable"
                assert (ROOT / source).exists(), f"{name}: bind-mounted {source} does not exist"
            else:
                assert source in declared, f"{name}: named volume {source!r} is not declared under top-level volumes"


def test_every_compose_variable_and_setting_is_documented_in_env_example(raw_compose):
    documented = set(re.findall(r"^\s*#?\s*([A-Z][A-Z0-9_]*)=", ENV_EXAMPLE.read_text(), re.M))
    in_compose = set(re.findall(r"(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)", yaml.safe_dump(raw_compose)))  # not comments
    # A name without a value hands the operator's value on: documented like the rest.
    in_compose |= {
        name
        for service in raw_compose["services"].values()
        for name, value in environment_of(service).items()
        if value is None
    }
    missing = in_compose - documented
    assert not missing, f".env.example does not document these compose variables: {sorted(missing)}"
    settings_source = "\n".join(p.read_text() for p in sorted((ROOT / "config" / "settings").glob("*.py")))
    read = set(re.findall(r"env_(?:str|required|bool|int|list)\(\s*[\"']([A-Z][A-Z0-9_]*)[\"']", settings_source))
    missing = read - documented - NOT_FOR_OPERATORS
    assert not missing, f".env.example does not document these settings read from the environment: {sorted(missing)}"


def environment_of(service: dict) -> dict:
    environment = service.get("environment", {})
    if isinstance(environment, list):
        environment = dict(item.split("=", 1) if "=" in item else (item, None) for item in environment)
    return environment


def env_files_of(service: dict) -> list[str]:
    entries = service.get("env_file", [])
    entries = [entries] if isinstance(entries, (str, dict)) else entries
    return [entry if isinstance(entry, str) else entry["path"] for entry in entries]


def container_environment(raw_compose: dict, name: str, dotenv: dict[str, str]) -> dict[str, str]:
    """What compose gives service `name`'s container, for an operator's .env: the env file's variables where the
    service takes it, then its `environment:` (a name without a value hands on the .env's value, if any)."""
    service = interpolate(raw_compose, values=dotenv)["services"][name]
    given = dict(dotenv) if ".env" in env_files_of(service) else {}
    for key, value in environment_of(service).items():
        if value is not None:
            given[key] = str(value)
        elif key in dotenv:
            given[key] = dotenv[key]
    return given


def test_each_app_service_runs_its_settings_with_every_variable_they_require(services):
    for module, names in SETTINGS_OF.items():
        required = set(re.findall(r"env_required\(\s*[\"']([A-Z][A-Z0-9_]*)[\"']", module_file(module).read_text()))
        assert required, f"{module} requires nothing from the environment"
        for name in names:
            environment = environment_of(services[name])
            assert environment.get("DJANGO_SETTINGS_MODULE") == module, f"{name} must run under {module}"
            missing = {var for var in required if not environment.get(var)}
            assert not missing, f"{name} does not pass what {module} requires: {sorted(missing)}"
    assert set(app_services(services)) == {name for names in SETTINGS_OF.values() for name in names}


def test_judge_workers_get_only_what_a_judge_worker_uses(services):
    """Issue 41: a reader's kernel runs under these processes; whatever they hold, it may read."""
    from config.judge_env import SITE_SECRETS, judge_worker_environ

    for name in JUDGE_SERVICES:
        service = services[name]
        assert not env_files_of(service), f"{name} must not take an env_file: it would hold every secret in it"
        environment = dict.fromkeys(environment_of(service), "")  # the names; a value comes from .env or nowhere
        unused = set(environment) - set(judge_worker_environ(environment))
        assert not unused, f"{name} gets variables a judge worker does not use: {sorted(unused)}"
        assert not set(environment) & set(SITE_SECRETS)
        assert {"DATABASE_URL", "CELERY_BROKER_URL", "GPU_KINDS"} <= set(environment)
        # Issue 43: a GPU worker writes the profiles' reports into their own volume, which web serves; nothing else.
        allowed = ["profiles:/app/var/profiles"] if name == "gpu-worker" else []
        assert service.get("volumes") == allowed, f"{name} must not mount the appvar volume (EPUBs, media)"


def test_the_site_secrets_reach_only_the_services_that_use_them(services):
    secrets_in_env_file = ("STRIPE_SECRET_KEY", "STRIPE_WEBHOOK_SECRET", "EMAIL_HOST_PASSWORD", "GITHUB_CLIENT_SECRET")
    for name in SITE_SERVICES:
        assert env_files_of(services[name]) == [".env"], f"{name} takes the site's settings from .env"
    beat = services["beat"]
    assert not env_files_of(beat), "beat only sends messages: it takes nothing from .env"
    assert not set(environment_of(beat)) & set(secrets_in_env_file)
    for name, service in services.items():
        if name not in SITE_SERVICES:
            assert not set(environment_of(service)) & set(secrets_in_env_file), f"{name} holds a site secret"


# --- Commands are real -----------------------------------------------------------------------


def check_celery(argv: list[str], where: str) -> dict:
    app = option(argv, "-A", "--app")
    assert app, f"{where}: celery without -A"
    module, _, attribute = app.partition(":")
    path = module_file(module)
    if path.name == "__init__.py" and not attribute and not python_defines(path, "app"):
        path = module_file(f"{module}.celery")  # `-A config` finds config.celery.app
    assert python_defines(path, attribute or "app"), (
        f"{where}: {path.relative_to(ROOT)} defines no `{attribute or 'app'}`"
    )
    sub = next((a for a in argv[1:] if a in ("worker", "beat", "inspect", "flower", "events")), None)
    assert sub, f"{where}: no celery sub-command in {argv}"
    info = {"sub": sub}
    if sub == "worker":
        queues = option(argv, "-Q", "--queues")
        assert queues, f"{where}: a worker must name its queues with -Q"
        info["queues"] = queues.split(",")
        unknown = set(info["queues"]) - declared_queues()
        assert not unknown, (
            f"{where}: queues {sorted(unknown)} are not declared in settings ({sorted(declared_queues())})"
        )
        info["node"] = option(argv, "-n", "--hostname")
    return info


def check_gunicorn(argv: list[str], where: str) -> None:
    targets = [a for a in argv[1:] if re.fullmatch(r"[\w.]+:[\w]+", a)]
    assert targets, f"{where}: gunicorn without a module:callable target"
    module, attribute = targets[0].split(":")
    assert targets[0] == "config.wsgi:application", f"{where}: gunicorn serves {targets[0]}"
    assert python_defines(module_file(module), attribute), f"{where}: {module} defines no {attribute}"
    config = option(argv, "-c", "--config")
    if config:
        assert repo_path(config).is_file(), f"{where}: gunicorn config {config} does not exist"


def check_manage(argv: list[str], where: str) -> None:
    from django.core.management import get_commands

    assert (ROOT / "manage.py").is_file()
    assert argv[2] in get_commands(), f"{where}: `manage.py {argv[2]}` is not a management command"


def check_command(argv: list[str], where: str) -> dict:
    if argv[0] == "celery":
        return check_celery(argv, where)
    if argv[0] == "gunicorn":
        check_gunicorn(argv, where)
    elif argv[:2] == ["python", "manage.py"]:
        check_manage(argv, where)
    elif argv[0] == "python":
        assert repo_path(argv[1]).is_file(), f"{where}: {argv[1]} does not exist"
    else:
        pytest.fail(f"{where}: unrecognised command {argv}; teach tests/test_compose.py to check it")
    return {}


def test_every_service_command_is_real(services):
    for name, service in app_services(services).items():
        check_command(command_of(service), f"service {name}")


def test_workers_consume_the_queues_of_the_design(services):
    cpu = check_celery(command_of(services["worker"]), "worker")
    assert cpu["queues"] == ["default"], f"worker consumes {cpu['queues']}: readers' kernels must not reach it"
    compiles = check_celery(command_of(services["compile-worker"]), "compile-worker")
    assert compiles["queues"] == ["compile"], f"compile-worker consumes {compiles['queues']}"
    assert check_celery(command_of(services["beat"]), "beat")["sub"] == "beat"
    web = command_of(services["web"])
    assert web[0] == "gunicorn"


def test_gpu_worker_runs_one_job_per_gpu(services):
    gpu = services["gpu-worker"]
    argv = command_of(gpu)
    info = check_celery(argv, "gpu-worker")
    # Issue 43: judgements first, then the profiles of accepted kernels, in this order (queue_order_strategy).
    assert info["queues"] == ["gpu.h200", "gpu.h200.profile"], (
        f"gpu-worker consumes {info['queues']} (expected gpu.h200,gpu.h200.profile by default)"
    )
    assert option(argv, "-c", "--concurrency") == "1", "one worker process per GPU: -c 1"
    assert option(argv, "--prefetch-multiplier") == "1", "a GPU worker must not reserve jobs: --prefetch-multiplier 1"
    devices = gpu["deploy"]["resources"]["reservations"]["devices"]
    assert len(devices) == 1 and devices[0]["driver"] == "nvidia", "reserve the GPU through the nvidia driver"
    assert "gpu" in devices[0]["capabilities"]
    assert len(devices[0].get("device_ids", [])) == 1 or devices[0].get("count") == 1, "exactly one GPU per container"
    assert "CUDA_VISIBLE_DEVICES" in gpu["environment"], "pin the process to its GPU with CUDA_VISIBLE_DEVICES"
    kind = gpu["environment"].get("GPU_KIND")
    assert info["queues"] == [f"gpu.{kind}", f"gpu.{kind}.profile"], "GPU_KIND (the kind it reports) names its queues"
    assert "gpu" in gpu.get("profiles", []), "the gpu-worker needs a GPU; keep it behind the `gpu` profile"


def test_worker_health_checks_ping_their_own_node(services):
    for name in ("worker", "compile-worker", "gpu-worker"):
        info = check_celery(command_of(services[name]), name)
        test = services[name]["healthcheck"]["test"]
        text = " ".join(test) if isinstance(test, list) else test
        pinged = re.search(r"-d\s+\"?([^@\s\"]+)@", text)
        assert pinged and info["node"], f"{name}: the health check must ping this worker's node (-n / -d)"
        assert info["node"].split("@")[0] == pinged.group(1), (
            f"{name}: health check pings {pinged.group(1)}, worker is {info['node']}"
        )


def test_health_check_urls_resolve(services):
    from django.urls import Resolver404, resolve

    urls = healthcheck_urls(services["web"]["healthcheck"]["test"])
    for keyword, arguments in dockerfile_instructions():
        if keyword == "HEALTHCHECK" and "CMD" in arguments:
            urls += healthcheck_urls(arguments)
            script = re.search(r"\"(/app/[\w/.-]+\.py)\"", arguments)
            if script:
                assert repo_path(script.group(1)).is_file(), (
                    f"Dockerfile HEALTHCHECK runs {script.group(1)}, which does not exist"
                )
    assert urls, "web has no HTTP health check"
    test = services["web"]["healthcheck"]["test"]
    if isinstance(test, list) and test[0] == "CMD":
        check_command(test[1:], "web healthcheck")
    for url in urls:
        path = urlsplit(url).path
        assert path == "/health/", f"health checks must probe /health/, not {path}"
        try:
            match = resolve(path)
        except Resolver404:
            pytest.fail(f"health check URL {url} does not resolve in the project's URLconf")
        assert match.url_name == "health"


def test_dockerfile_commands_are_real():
    stages, cmds, users = set(), {}, {}
    current = None
    for keyword, arguments in dockerfile_instructions():
        if keyword == "FROM":
            match = re.search(r"\s+AS\s+(\S+)\s*$", arguments, re.I)
            current = match.group(1) if match else None
            stages.add(current)
        elif keyword == "CMD":
            cmds[current] = exec_form(arguments)
        elif keyword == "USER":
            users[current] = arguments
    for stage in ("runtime", "gpu"):
        assert stage in cmds, f"Dockerfile stage {stage} has no CMD"
        check_command(cmds[stage], f"Dockerfile {stage} CMD")
        assert users.get(stage) not in (None, "root", "0"), f"Dockerfile stage {stage} must run as a non-root user"
    assert cmds["runtime"][0] == "gunicorn"
    # The default target is the web image, and the build-time secret is not an ENV.
    last_from = [a for k, a in dockerfile_instructions() if k == "FROM"][-1]
    assert re.search(r"\bAS\s+runtime\b", last_from, re.I), "the last stage (default target) must be `runtime`"
    for keyword, arguments in dockerfile_instructions():
        if keyword in ("ENV", "ARG"):
            assert "SECRET_KEY" not in arguments, "SECRET_KEY must never be baked into the image (ENV/ARG)"


# --- The checks above can fail -------------------------------------------------------------------


def test_the_checks_catch_typos():
    """A mistyped queue, app, target, URL or condition is reported, not waved through."""
    with pytest.raises(AssertionError):
        check_celery(["celery", "-A", "config", "worker", "-Q", "defualt,compile"], "typo")
    with pytest.raises(AssertionError):
        check_celery(["celery", "-A", "confg", "worker", "-Q", "default"], "typo")
    with pytest.raises(AssertionError):
        check_gunicorn(["gunicorn", "config.wsgi:app"], "typo")
    with pytest.raises(AssertionError):
        check_gunicorn(["gunicorn", "config.wsgi:application", "--config", "docker/gunicorn.conf.pyy"], "typo")
    with pytest.raises(AssertionError):
        check_manage(["python", "manage.py", "migrat"], "typo")
    assert interpolate("${A:-x${B:-y}z}") == "xyz"
    assert interpolate("p$$HOSTNAME ${S:?m}") == "p$HOSTNAME <S>"
    assert interpolate("${A:-x${B:-y}z} ${S:?m}", values={"B": "b", "S": "s"}) == "xbz s"
    seen: set[str] = set()
    interpolate({"k": "${SECRET_KEY:?set it}"}, seen)
    assert seen == {"SECRET_KEY"}
    assert is_dockerignored(".env") and not is_dockerignored("docker/healthcheck.py")
    assert is_dockerignored("apps/x/__pycache__/m.pyc") and is_dockerignored("var/db.sqlite3")


def test_gunicorn_trusts_forwarded_headers_only_from_the_configured_proxy(monkeypatch):
    import runpy

    monkeypatch.delenv("FORWARDED_ALLOW_IPS", raising=False)
    assert runpy.run_path(str(ROOT / "docker" / "gunicorn.conf.py"))["forwarded_allow_ips"] == "127.0.0.1"
    monkeypatch.setenv("FORWARDED_ALLOW_IPS", "10.0.0.5")
    assert runpy.run_path(str(ROOT / "docker" / "gunicorn.conf.py"))["forwarded_allow_ips"] == "10.0.0.5"


def test_the_cache_evicts_within_a_memory_limit_and_the_broker_never_evicts(services):
    cache, broker = services["cache"]["command"], services["redis"]["command"]
    assert cache[cache.index("--maxmemory-policy") + 1] == "allkeys-lru" and "--maxmemory" in cache
    assert services["cache"]["deploy"]["resources"]["limits"]["memory"]
    assert broker[broker.index("--maxmemory-policy") + 1] == "noeviction" and "--maxmemory" not in broker
    environment = services["web"]["environment"]
    assert urlsplit(environment["REDIS_URL"]).hostname == "cache"
    assert urlsplit(environment["CELERY_BROKER_URL"]).hostname == "redis"
