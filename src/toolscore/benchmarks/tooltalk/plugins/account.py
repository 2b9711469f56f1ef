"""ToolTalk's AccountTools plugin: sign-up, log-in, passwords and the user directory.

All other ToolTalk plugins keep their data per username and learn who is calling from the
session token (the lookup they share is in :mod:`.common`, with the two simulators' rules). The
log-in state itself belongs to the Environment (``env.session``): the tools that open or
close a session (UserLogin, RegisterUser, LogoutUser, DeleteAccount) update it, the Environment
injects the current token into every other tool. Exception texts are part of the simulated
world (the model reads them, the scorer compares them), so they are kept in one place.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from toolscore.benchmarks.tooltalk.equivalence import rule_for
from toolscore.benchmarks.tooltalk.plugins.common import (
    ACCOUNT_DB,
    check_text,
    current_user,
    random_id,
    require_text,
    strict,
    success,
)
from toolscore.env.environment import Environment, Session
from toolscore.env.plugin import Plugin
from toolscore.env.tool import Tool, tool

EMAIL_PATTERN = re.compile(r"^[\w\-\d\.]+@[\w\-\d\.]+$")
PHONE_PATTERN = re.compile(r"^\d{3}-\d{3}-\d{4}$")

WRONG_PASSWORD = "The password is incorrect."
WRONG_OLD_PASSWORD = "The old password is incorrect."
UNKNOWN_USER = "The username does not exist."
USERNAME_TAKEN = "The username already exists."
BAD_EMAIL = "The email format is invalid."
BAD_PHONE = "The phone number format is invalid."
WRONG_EMAIL = "The email is incorrect."
WRONG_CODE = "The verification code is incorrect."
ALREADY_LOGGED_IN = "The user is already logged in."
NOTHING_TO_UPDATE = "You need to provide at least one of new_email and new_phone_number."
# the reference's wording where the strict simulator's differs
NO_QUERY = "Provide a username or an email to search for."
REFERENCE_NO_QUERY = "You need to provide at least one of username and email."
REFERENCE_BAD_NEW_EMAIL = "The email is invalid."
REFERENCE_BAD_NEW_PHONE = "The phone number is invalid."
PUBLIC_FIELDS = ("username", "email", "phone", "name")


# -- helpers of this plugin ----------------------------------------------------------------------
def _public(account: dict[str, Any]) -> dict[str, Any]:
    return {field: account.get(field) for field in PUBLIC_FIELDS}


def _account(env: Environment, username: Any) -> dict[str, Any]:
    """The account of ``username``; the default simulator looks any value up, as the reference
    does (a number finds no account unless one was registered under it; a list fails with
    "unhashable type: 'list'")."""
    accounts = env.db(ACCOUNT_DB)
    if (strict(env) and not isinstance(username, str)) or username not in accounts:
        raise LookupError(UNKNOWN_USER)
    return accounts[username]


def _refuse_second_login(env: Environment) -> None:
    if env.session is not None:
        raise PermissionError("Only one user can be logged in at a time. "
                              f"Current user is {env.session.username}.")


def _new_session(env: Environment, tool_name: str, account: dict[str, Any]) -> str:
    token = random_id(env, tool_name, 8, 4, 4)
    account["session_token"] = token
    env.session = Session(account["username"], token)
    return token


def _valid_email(env: Environment, value: Any, name: str, reference_text: str = BAD_EMAIL
                 ) -> str:
    """``value`` if it looks like an email address. Not text: the strict simulator says so,
    the default one fails in the pattern match, as the reference does ("expected string or
    bytes-like object, got 'int'")."""
    if not EMAIL_PATTERN.match(check_text(env, value, name)):
        raise ValueError(BAD_EMAIL if strict(env) else reference_text)
    return value


def _valid_phone(env: Environment, value: Any, name: str, reference_text: str = BAD_PHONE
                 ) -> str:
    if not PHONE_PATTERN.match(check_text(env, value, name)):
        raise ValueError(BAD_PHONE if strict(env) else reference_text)
    return value


# -- tools ---------------------------------------------------------------------------------------
@tool("ChangePassword", action=True, auth=True, equivalence=rule_for("ChangePassword"))
def change_password(env: Environment, session_token: str, old_password: str,
                    new_password: str) -> dict[str, Any]:
    """Change the password of the logged-in user; the current password must be confirmed.

    Args:
        old_password: The password the user has now.
        new_password: The password the user wants from now on.
    """
    account = env.db(ACCOUNT_DB)[current_user(env, session_token)]
    if account.get("password") != old_password:
        raise PermissionError(WRONG_OLD_PASSWORD)
    account["password"] = check_text(env, new_password, "new_password")
    return success()


@tool("DeleteAccount", action=True, auth=True, equivalence=rule_for("DeleteAccount"))
def delete_account(env: Environment, session_token: str, password: str) -> dict[str, Any]:
    """Permanently delete the logged-in user's account and log them out.

    Args:
        password: The user's password, to confirm the deletion.
    """
    username = current_user(env, session_token)
    if env.db(ACCOUNT_DB)[username].get("password") != password:
        raise PermissionError(WRONG_PASSWORD)
    del env.db(ACCOUNT_DB)[username]
    env.session = None
    return success()


@tool("GetAccountInformation", auth=True, equivalence=rule_for("GetAccountInformation"))
def get_account_information(env: Environment, session_token: str) -> dict[str, Any]:
    """Show the logged-in user's account details: username, email, phone number and name."""
    return {"user": _public(env.db(ACCOUNT_DB)[current_user(env, session_token)])}


@tool("LogoutUser", action=True, auth=True, equivalence=rule_for("LogoutUser"))
def logout_user(env: Environment, session_token: str) -> dict[str, Any]:
    """Log the current user out, ending their session."""
    env.db(ACCOUNT_DB)[current_user(env, session_token)]["session_token"] = None
    env.session = None
    return success()


@tool("QueryUser", auth=True, equivalence=rule_for("QueryUser"))
def query_user(env: Environment, session_token: str, username: str | None = None,
               email: str | None = None) -> dict[str, Any]:
    """Look up other users by username and/or email address, e.g. to find someone's contact.

    Args:
        username: The exact username to look for.
        email: The exact email address to look for.
    """
    current_user(env, session_token)
    if username is None and email is None:
        raise ValueError(NO_QUERY if strict(env) else REFERENCE_NO_QUERY)
    check_text(env, username, "username", optional=True)
    check_text(env, email, "email", optional=True)
    accounts = env.db(ACCOUNT_DB)
    if username is not None:  # the reference looks the username up and never reads the email
        return {"users": [_public(accounts[username])] if username in accounts else []}
    return {"users": [_public(account) for account in accounts.values()
                      if account.get("email") == email]}


@tool("RegisterUser", action=True, equivalence=rule_for("RegisterUser"))
def register_user(env: Environment, username: str, password: str, email: str,
                  name: str | None = None, phone: str | None = None) -> dict[str, Any]:
    """Create a new account and log the new user in.

    Args:
        username: The username wanted for the new account.
        password: The password of the new account.
        email: The email address of the new user, e.g. jane.doe@example.com.
        name: The user's full name.
        phone: The user's phone number, formatted 123-456-7890.
    """
    accounts = env.db(ACCOUNT_DB)
    if username in accounts:
        raise ValueError(USERNAME_TAKEN)
    _valid_email(env, email, "email")
    if phone is not None:
        _valid_phone(env, phone, "phone")
    # values the reference never reads come last, so they never hide one of its checks
    check_text(env, username, "username")
    check_text(env, password, "password")
    check_text(env, name, "name", optional=True)
    account = {"username": username, "email": email, "phone": phone, "name": name,
               "password": password, "session_token": None}
    accounts[username] = account
    token = _new_session(env, "RegisterUser", account)
    return {"session_token": token, "user": _public(account)}


@tool("ResetPassword", action=True, equivalence=rule_for("ResetPassword"))
def reset_password(env: Environment, username: str, verification_code: str,
                   new_password: str) -> dict[str, Any]:
    """Set a new password for a user who forgot theirs, using the code emailed to them.

    Args:
        username: The username of the account.
        verification_code: The 6-digit code sent to the user by SendVerificationCode.
        new_password: The new password.
    """
    account = _account(env, username)
    code = account.get("verification_code")
    if not strict(env):  # the code is compared as given and stays valid, as in the reference
        if "verification_code" not in account or code != verification_code:
            raise PermissionError(WRONG_CODE)
        account["password"] = new_password
        return success()
    if code is None or str(verification_code) != code:
        raise PermissionError(WRONG_CODE)
    account["password"] = require_text(new_password, "new_password")
    del account["verification_code"]  # used once
    return success()


@tool("SendVerificationCode", action=True, equivalence=rule_for("SendVerificationCode"))
def send_verification_code(env: Environment, username: str, email: str) -> dict[str, Any]:
    """Email a verification code to a user, so that they can reset their password.

    Args:
        username: The username of the account.
        email: The email address registered for the account.
    """
    account = _account(env, username)
    if account.get("email") != email:
        raise PermissionError(WRONG_EMAIL)
    account["verification_code"] = f"{env.rng('SendVerificationCode').randint(0, 999999):06d}"
    return success()


@tool("UpdateAccountInformation", action=True, auth=True,
      equivalence=rule_for("UpdateAccountInformation"))
def update_account_information(env: Environment, session_token: str, password: str,
                               new_email: str | None = None,
                               new_phone_number: str | None = None,
                               new_name: str | None = None) -> dict[str, Any]:
    """Change the logged-in user's email, phone number and/or name.

    Args:
        password: The user's password, to confirm the change.
        new_email: The new email address.
        new_phone_number: The new phone number, formatted 123-456-7890.
        new_name: The new full name.
    """
    account = env.db(ACCOUNT_DB)[current_user(env, session_token)]
    if account.get("password") != password:
        raise PermissionError(WRONG_PASSWORD)
    if new_email is None and new_phone_number is None:  # a new name alone is refused
        raise ValueError(NOTHING_TO_UPDATE)
    # each field is checked and written in turn, as the reference does: a bad phone number
    # fails the call after a good new email was already stored
    if new_email is not None:
        account["email"] = _valid_email(env, new_email, "new_email", REFERENCE_BAD_NEW_EMAIL)
    if new_phone_number is not None:
        account["phone"] = _valid_phone(env, new_phone_number, "new_phone_number",
                                        REFERENCE_BAD_NEW_PHONE)
    if new_name is not None:
        account["name"] = check_text(env, new_name, "new_name")
    return success()


@tool("UserLogin", action=True, equivalence=rule_for("UserLogin"))
def user_login(env: Environment, username: str, password: str) -> dict[str, Any]:
    """Log a user in with their username and password.

    Args:
        username: The username of the account.
        password: The password of the account.
    """
    account = _account(env, username)
    if account.get("password") != password:
        raise PermissionError(WRONG_PASSWORD)
    if account.get("session_token") is not None:
        raise PermissionError(ALREADY_LOGGED_IN)
    return {"session_token": _new_session(env, "UserLogin", account)}


def _one_session_first(opener: Tool) -> Tool:
    """Refuse a second log-in before the tool's arguments are bound.

    The reference's executor refuses UserLogin and RegisterUser while someone is logged in
    before it calls the tool, so that refusal wins over a missing or unexpected argument. The
    Environment checks the arguments before it calls ``fn``; here ``fn`` takes any keywords,
    refuses, then checks them against the tool's own signature.
    """
    inner = opener.fn

    def refuse_then_call(env: Environment, /, **arguments: Any) -> dict[str, Any]:
        _refuse_second_login(env)
        # the tool as declared (its label is set when the plugins are assembled)
        dataclasses.replace(opener, fn=inner).check_arguments(arguments)
        return inner(env, **arguments)

    opener.fn = refuse_then_call
    return opener


user_login = _one_session_first(user_login)
register_user = _one_session_first(register_user)


PLUGIN = Plugin(
    "AccountTools",
    [change_password, delete_account, get_account_information, logout_user, query_user,
     register_user, reset_password, send_verification_code, update_account_information,
     user_login],
    databases=(ACCOUNT_DB,),
    description="User accounts: registration, log-in, passwords and the user directory.",
)
