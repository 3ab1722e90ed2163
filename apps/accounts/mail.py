"""Account emails (address confirmation, password reset, ...) are sent by a Celery task after the transaction
commits, never inside the reader's request: with the SMTP server down, sign-up answered 500 and left an unverified
account behind that blocked signing up again with the same address. The request renders the message (it needs the
request's site and the reader's links) and hands plain data to the task, which retries with backoff until the SMTP
server takes it."""

from __future__ import annotations

import logging
import smtplib

from django.core.mail import EmailMessage, EmailMultiAlternatives
from django.db import transaction

from config.broker import BROKER_ERRORS

logger = logging.getLogger(__name__)

# What a failed delivery raises: the SMTP conversation's errors, and the socket's (refused, timed out, unreachable).
SMTP_ERRORS = (smtplib.SMTPException, OSError)


def message_data(message: EmailMessage) -> dict:
    """The message as JSON-able data for the task (the queue takes JSON only)."""
    return {
        "subject": message.subject,
        "body": message.body,
        "from_email": message.from_email,
        "to": list(message.to),
        "headers": dict(message.extra_headers),
        "alternatives": [[content, mimetype] for content, mimetype in getattr(message, "alternatives", [])],
    }


def email_deliver(*, data: dict) -> None:
    """Send one message now; raises SMTP_ERRORS when the server does not take it (the task retries)."""
    message = EmailMultiAlternatives(
        subject=data["subject"],
        body=data["body"],
        from_email=data["from_email"],
        to=data["to"],
        headers=data["headers"],
    )
    for content, mimetype in data["alternatives"]:
        message.attach_alternative(content, mimetype)
    message.send()


def email_send_after_commit(*, message: EmailMessage) -> None:
    """Queue the message once the surrounding transaction commits (at once outside one). With the broker down too,
    one attempt is made from here, and a failure is logged, not raised: the reader's request never fails on mail."""
    from apps.accounts.tasks import send_email

    data = message_data(message)

    def send():
        try:
            send_email.delay(data)
        except BROKER_ERRORS as error:
            logger.warning("email to %s: the broker refused it (%s); sending it from the request", data["to"], error)
            try:
                email_deliver(data=data)
            except SMTP_ERRORS as smtp_error:
                logger.error(
                    "email to %s lost: neither the broker nor the SMTP server took it (%s)", data["to"], smtp_error
                )

    transaction.on_commit(send)
