"""The content schemas `dossier schema` writes, checked with a validator written by others
(`jsonschema`): the sample content passes them, and a misspelled field is refused by the
schema and by `dossier check` alike."""

import json
import os
import shutil
import subprocess
import tomllib

import jsonschema

from conftest import ROOT, dossier_binary

CONTENT = os.path.join(ROOT, "content")


def schemas(tmp_path):
    result = subprocess.run(
        [dossier_binary(), "schema", "--out", str(tmp_path / "schemas")],
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 0, result.stderr
    loaded = {}
    for name in ["company", "division", "page"]:
        with open(tmp_path / "schemas" / f"{name}.schema.json") as file:
            schema = json.load(file)
        jsonschema.Draft202012Validator.check_schema(schema)
        loaded[name] = jsonschema.Draft202012Validator(
            schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
        )
    return loaded


def front_matter(path):
    with open(path) as file:
        text = file.read()
    _, matter, _ = text.split("+++\n", 2)
    return tomllib.loads(matter)


def errors(validator, document):
    return [f"{e.json_path}: {e.message}" for e in validator.iter_errors(document)]


def test_the_sample_content_follows_the_schemas(tmp_path):
    validators = schemas(tmp_path)
    with open(os.path.join(CONTENT, "company.json")) as file:
        assert errors(validators["company"], json.load(file)) == []
    divisions = os.path.join(CONTENT, "divisions")
    for name in sorted(os.listdir(divisions)):
        with open(os.path.join(divisions, name)) as file:
            assert errors(validators["division"], json.load(file)) == [], name
    pages = os.path.join(CONTENT, "pages")
    for name in sorted(os.listdir(pages)):
        assert errors(validators["page"], front_matter(os.path.join(pages, name))) == [], name


def test_a_misspelled_field_is_refused_by_the_schema_and_by_dossier(tmp_path):
    validators = schemas(tmp_path)
    content = tmp_path / "content"
    shutil.copytree(CONTENT, content)
    with open(content / "company.json") as file:
        company = json.load(file)
    # `$schema` is accepted by both; `tagline` misspelled is refused by both.
    company["$schema"] = "../schemas/company.schema.json"
    assert errors(validators["company"], company) == []
    company["tagnile"] = company.pop("tagline")
    assert any("tagnile" in error for error in errors(validators["company"], company))
    with open(content / "company.json", "w") as file:
        json.dump(company, file, indent=2)
    result = subprocess.run(
        [dossier_binary(), "check", "--content", str(content)],
        capture_output=True, text=True, timeout=60, cwd=tmp_path,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "company.json" in result.stderr and "tagnile" in result.stderr, result.stderr
    # The same misspelling in a page's front matter.
    page = front_matter(os.path.join(CONTENT, "pages", "careers.md"))
    page["sumary"] = page.pop("summary")
    assert any("sumary" in error for error in errors(validators["page"], page))
