from django.test import Client

from apps.catalog.models import Book, Capsule


def test_staff_edit_a_capsule_in_admin_and_see_the_rendered_preview(mini_book, staff):
    client = Client()
    client.force_login(staff)
    capsule = Capsule.objects.get(slug="locked-three")
    url = f"/admin/catalog/capsule/{capsule.pk}/change/"
    page = client.get(url).content.decode()
    assert "Rendered preview" in page and "Warp tiles sit between blocks and threads." in page
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
            "outline": '["Warps"]',
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
    assert '<math alttext="x^2"' in client.get(url).content.decode()


def test_readers_cannot_open_the_catalogue_admin(mini_book, reader):
    client = Client()
    client.force_login(reader)
    assert client.get("/admin/catalog/capsule/").status_code == 302
