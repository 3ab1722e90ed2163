import re
from html import unescape

import pytest
from django.test import Client

from apps.catalog.forms import OUTLINE_MAX_LENGTH, OutlineField
from apps.catalog.models import Book, Capsule


def test_staff_edit_a_capsule_in_admin_and_see_the_rendered_preview(mini_book, staff):
    client = Client()
    client.force_login(staff)
    capsule = Capsule.objects.get(slug="locked-three")
    url = f"/admin/catalog/capsule/{capsule.pk}/change/"
    page = client.get(url).content.decode()
    assert 'class="capsule-preview"' in page and "Warp tiles sit between blocks and threads." in page
    book_revision = Book.objects.get().revision
    figures = capsule.figures.count()
    response = client.post(
        url,
        {
            "book": capsule.book_id,
            "part": capsule.part_id,
            "number": 3,
            "slug": "locked-three",
            "title": "Locked three: warps",
            "badge": "WARP",
            "minutes": 15,
            "access": "locked",
            "status": "published",
            "summary": capsule.summary,
            "outline": "Warps",
            "body": "## Warps\n\nNow with $x^2$ and <script>x()</script>.",
            "figures-TOTAL_FORMS": figures,
            "figures-INITIAL_FORMS": figures,
            "figures-MIN_NUM_FORMS": 0,
            "figures-MAX_NUM_FORMS": 1000,
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    capsule.refresh_from_db()
    assert capsule.revision == 2 and Book.objects.get().revision == book_revision + 1
    assert '<math alttext="x^2"' in capsule.body_html and "&lt;script&gt;" in capsule.body_html
    assert "&lt;math alttext=&quot;x^2&quot;" in client.get(url).content.decode()  # in the preview's srcdoc


def test_readers_cannot_open_the_catalogue_admin(mini_book, reader):
    client = Client()
    client.force_login(reader)
    assert client.get("/admin/catalog/capsule/").status_code == 302


# --- Issue 17: the outline as lines, the live preview, one "Accounts" in the index ----------------------
PREVIEW = "/admin/catalog/capsule/preview/"


def change_form_data(capsule, **changes) -> dict:
    figures = capsule.figures.count()
    data = {
        "book": capsule.book_id,
        "part": capsule.part_id,
        "number": capsule.number,
        "slug": capsule.slug,
        "title": capsule.title,
        "badge": capsule.badge,
        "minutes": capsule.minutes,
        "access": capsule.access,
        "status": capsule.status,
        "summary": capsule.summary,
        "outline": "\n".join(capsule.outline),
        "body": capsule.body,
        "figures-TOTAL_FORMS": figures,
        "figures-INITIAL_FORMS": figures,
        "figures-MIN_NUM_FORMS": 0,
        "figures-MAX_NUM_FORMS": 1000,
    }
    data.update(changes)
    return data


def test_the_outline_is_edited_as_lines_and_stored_as_a_list(mini_book, staff):
    client = Client()
    client.force_login(staff)
    capsule = Capsule.objects.get(slug="locked-three")
    capsule.outline = ["Warps", "Lanes, and why 32"]
    capsule.save()
    url = f"/admin/catalog/capsule/{capsule.pk}/change/"

    page = client.get(url).content.decode()
    textarea = re.search(r'<textarea name="outline"[^>]*>(.*?)</textarea>', page, re.S).group(1)
    assert unescape(textarea).strip() == "Warps\nLanes, and why 32"  # lines, not ["Warps", ...]

    lines = "Warps\r\n\r\n- Lanes, and why 32\r\n  Divergence  \r\n"
    response = client.post(url, change_form_data(capsule, outline=lines))
    assert response.status_code == 302, response.content.decode()[:2000]
    capsule.refresh_from_db()
    assert capsule.outline == ["Warps", "Lanes, and why 32", "Divergence"]

    # A refused line keeps what was typed and says which line.
    too_long = "Warps\n" + "x" * (OUTLINE_MAX_LENGTH + 1)
    response = client.post(url, change_form_data(capsule, outline=too_long))
    assert response.status_code == 200
    assert "Line 2 is longer than" in response.content.decode()
    capsule.refresh_from_db()
    assert capsule.outline == ["Warps", "Lanes, and why 32", "Divergence"]


@pytest.mark.parametrize(
    ("typed", "error"),
    [("a\x07b", "control character"), ("\n".join(f"S{n}" for n in range(41)), "At most 40")],
)
def test_the_outline_field_refuses_what_the_teaser_cannot_show(typed, error):
    with pytest.raises(Exception, match=error):
        OutlineField(required=False).clean(typed)


def test_the_outline_field_round_trips_the_stored_list():
    field = OutlineField(required=False)
    stored = ["From a strip to a rectangle", "Why the A6000 doubled"]
    assert field.clean(field.prepare_value(stored)) == stored
    assert field.clean("") == []


def test_the_live_preview_renders_unsaved_markdown_in_the_readers_styles(mini_book, staff):
    client = Client(enforce_csrf_checks=True)
    client.force_login(staff)
    capsule = Capsule.objects.get(slug="locked-three")
    page = client.get(f"/admin/catalog/capsule/{capsule.pk}/change/")
    token = page.cookies["csrftoken"].value
    before = (capsule.revision, capsule.body_html)

    response = client.post(
        PREVIEW,
        {
            "body": "## Tiles\n\n$x^2$ and <script>x()</script>\n\n```cuda\n__global__ void k() {}\n```",
            "slug": capsule.slug,
        },
        HTTP_X_CSRFTOKEN=token,
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert "/static/css/reader.css" in html and 'class="prose capsule__body"' in html  # the reader's styles
    assert '<math alttext="x^2"' in html and "&lt;script&gt;" in html and "<script>x()" not in html
    assert 'class="k' in html  # Pygments' token classes, as in the reader
    capsule.refresh_from_db()
    assert (capsule.revision, capsule.body_html) == before  # nothing saved

    # Broken maths: the reason, not a server error.
    response = client.post(PREVIEW, {"body": "$\\frac{1}{$", "slug": capsule.slug}, HTTP_X_CSRFTOKEN=token)
    assert response.status_code == 200 and 'role="alert"' in response.content.decode()


def test_the_preview_is_for_staff_only_posts_only_and_csrf_checked(mini_book, staff, reader):
    anonymous = Client()
    assert anonymous.post(PREVIEW, {"body": "x"}).status_code == 302  # to the admin's sign-in
    reader_client = Client()
    reader_client.force_login(reader)
    response = reader_client.post(PREVIEW, {"body": "SECRET"})
    assert response.status_code == 302 and "SECRET" not in response.content.decode()
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(staff)
    assert strict.post(PREVIEW, {"body": "x"}).status_code == 403  # no token
    client = Client()
    client.force_login(staff)
    assert client.get(PREVIEW).status_code == 405


def test_the_admin_index_has_one_section_per_name(staff):
    client = Client()
    client.force_login(staff)
    response = client.get("/admin/")
    names = [app["name"] for app in response.context["app_list"]]
    assert len(names) == len(set(names)), names
    assert names.count("Accounts") <= 1


def test_a_new_capsule_form_opens_with_an_empty_preview_that_the_page_fills(mini_book, staff):
    client = Client()
    client.force_login(staff)
    page = client.get("/admin/catalog/capsule/add/").content.decode()
    assert 'class="capsule-preview"' in page and 'srcdoc=""' in page  # admin_preview.js renders it on load
    assert "js/admin_preview.js" in page
