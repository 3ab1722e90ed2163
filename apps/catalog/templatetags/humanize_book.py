from django import template

register = template.Library()


@register.filter
def get_item(mapping, key):
    """`{{ progress|get_item:capsule.id }}`: look up a dict built by a selector."""
    return mapping.get(key) if mapping else None
