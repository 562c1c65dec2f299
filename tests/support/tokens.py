"""The static token file tests run the API with: an admin, a reader and a policy editor."""

from __future__ import annotations

TOKENS = {
    "admin": "admin-token-0123456789abcdef",
    "reader": "reader-token-0123456789abcdef",
    "editor": "editor-token-0123456789abcdef",
}
TOKEN_FILE = f"""# token,user,permissions
{TOKENS["admin"]},alice,*
{TOKENS["reader"]},bob,read
{TOKENS["editor"]},carol,get|list|update|patch
"""


def bearer(user: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKENS[user]}"}
