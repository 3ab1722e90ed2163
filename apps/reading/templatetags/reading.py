from django import template

from apps.reading.policy import has_full_access

register = template.Library()


@register.simple_tag
def full_access(user) -> bool:
    """{% full_access user as full_access %}: whether `user` may read everything, for templates of
    the apps below reading (the account page), whose views may not ask the policy themselves."""
    return has_full_access(user)
