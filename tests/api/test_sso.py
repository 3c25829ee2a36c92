"""Single sign-on with an OpenID Connect provider: the whole code flow over real HTTP against a
small provider of our own (token, userinfo and JWKS endpoints, RS256 ID tokens), so the
library's requests, the signature check and our checks of issuer, audience and nonce run as
in production."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlsplit

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from django.test import Client, override_settings
from jwt.algorithms import RSAAlgorithm

from apps.accounts.models import OidcIdentity, User
from tests.factories import make_user

pytestmark = pytest.mark.django_db
CLIENT_ID = "zhisuan"
KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)


class _Provider(BaseHTTPRequestHandler):
    issuer: ClassVar[str] = ""
    claims: ClassVar[dict[str, Any]] = {}  # the person signing in
    token_claims: ClassVar[dict[str, Any]] = {}  # overrides in the ID token (a bad iss, ...)
    nonce: ClassVar[str] = ""
    userinfo: ClassVar[dict[str, Any] | None] = None

    def _json(self, body: object, status: int = 200) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:  # the token endpoint
        form = parse_qs(self.rfile.read(int(self.headers["Content-Length"])).decode())
        if form.get("code") != ["the-code"] or not form.get("code_verifier"):
            self._json({"error": "invalid_grant"}, 400)
            return
        now = int(time.time())
        token = {"iss": self.issuer, "aud": CLIENT_ID, "iat": now, "exp": now + 300,
                 "nonce": self.nonce, **self.claims, **self.token_claims}  # fmt: skip
        id_token = jwt.encode(token, KEY, algorithm="RS256", headers={"kid": "k1"})
        self._json({"id_token": id_token, "access_token": "the-access-token"})

    def do_GET(self) -> None:
        if self.path == "/jwks":
            public = json.loads(RSAAlgorithm.to_jwk(KEY.public_key()))
            self._json({"keys": [{**public, "kid": "k1", "alg": "RS256", "use": "sig"}]})
        elif self.path == "/userinfo":
            assert self.headers["Authorization"] == "Bearer the-access-token"
            self._json(self.userinfo if self.userinfo is not None else self.claims)
        else:
            self._json({}, 404)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def provider() -> Iterator[type[_Provider]]:
    server = HTTPServer(("127.0.0.1", 0), _Provider)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    _Provider.issuer, _Provider.token_claims, _Provider.userinfo = base, {}, None
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with override_settings(
        OIDC_ISSUER=base,
        OIDC_NAME="Lab SSO",
        OIDC_RP_CLIENT_ID=CLIENT_ID,
        OIDC_RP_CLIENT_SECRET="s3cret",
        OIDC_OP_AUTHORIZATION_ENDPOINT=f"{base}/authorize",
        OIDC_OP_TOKEN_ENDPOINT=f"{base}/token",
        OIDC_OP_USER_ENDPOINT=f"{base}/userinfo",
        OIDC_OP_JWKS_ENDPOINT=f"{base}/jwks",
        OIDC_ADMIN_GROUP="",
        AUTHENTICATION_BACKENDS=[
            "django.contrib.auth.backends.ModelBackend",
            "apps.accounts.oidc.Backend",
        ],
    ):
        yield _Provider
    server.shutdown()


def sign_in(provider: type[_Provider], claims: dict[str, Any], next_path: str = "/jobs") -> Client:
    """The browser's part: go to the provider (here: read what it was asked), come back."""
    browser = Client()
    start = browser.get(f"/api/v1/auth/oidc/login/?next={next_path}")
    assert start.status_code == 302
    asked = urlsplit(start["Location"])
    query = parse_qs(asked.query)
    assert f"{asked.scheme}://{asked.netloc}{asked.path}" == f"{provider.issuer}/authorize"
    assert query["client_id"] == [CLIENT_ID] and query["code_challenge_method"] == ["S256"]
    assert query["redirect_uri"] == ["http://testserver/api/v1/auth/oidc/callback/"]
    provider.claims, provider.nonce = claims, query["nonce"][0]
    back = browser.get(
        "/api/v1/auth/oidc/callback/", {"code": "the-code", "state": query["state"][0]}
    )
    browser.landed = back["Location"]  # type: ignore[attr-defined]
    return browser


def whoami(browser: Client) -> dict[str, Any] | None:
    response = browser.get("/api/v1/auth/session/")
    return response.json()["user"] if response.status_code == 200 else None


def test_a_first_sign_in_makes_the_user_and_later_ones_find_them_by_subject(provider) -> None:
    ada = {"sub": "u-1", "preferred_username": "ada", "name": "Ada L.", "email": "ada@lab.example"}
    browser = sign_in(provider, ada)
    assert browser.landed == "/jobs"  # type: ignore[attr-defined]
    me = whoami(browser)
    assert me is not None and (me["username"], me["display_name"], me["email"]) == (
        "ada", "Ada L.", "ada@lab.example",
    )  # fmt: skip
    user = User.objects.get(username="ada")
    assert not user.has_usable_password() and not user.is_platform_admin
    assert me["has_password"] is False  # the profile offers no password form
    assert OidcIdentity.objects.get().subject == "u-1"
    # Renamed and moved at the provider: the same user, name and address following.
    again = sign_in(provider, {**ada, "preferred_username": "ada2", "email": "ada@new.example"})
    assert whoami(again) == {**me, "email": "ada@new.example"}
    assert User.objects.count() == 1


def test_a_taken_username_gets_a_number_not_the_other_person_s_account(provider) -> None:
    local = make_user("ada")
    browser = sign_in(provider, {"sub": "u-2", "preferred_username": "ada"})
    me = whoami(browser)
    assert me is not None and me["username"] == "ada-2"
    assert not local.oidc_identities.exists()
    # Characters a username may not hold become dashes.
    me = whoami(sign_in(provider, {"sub": "u-7", "preferred_username": " Grace Hopper/ops "}))
    assert me is not None and me["username"] == "Grace-Hopper-ops"


@pytest.mark.parametrize(
    "bad",
    [{"iss": "https://elsewhere.example"}, {"aud": "another-client"}, {"nonce": "replayed"},
     {"exp": int(time.time()) - 3600}],
)  # fmt: skip
def test_an_id_token_not_meant_for_us_signs_no_one_in(provider, bad: dict[str, Any]) -> None:
    provider.token_claims = bad
    browser = sign_in(provider, {"sub": "u-3", "preferred_username": "eve"})
    assert browser.landed == "/login?sso=failed"  # type: ignore[attr-defined]
    assert whoami(browser) is None and not User.objects.filter(username="eve").exists()


def test_userinfo_about_someone_else_signs_no_one_in(provider) -> None:
    provider.userinfo = {"sub": "u-999", "preferred_username": "mallory"}
    browser = sign_in(provider, {"sub": "u-4", "preferred_username": "bob"})
    assert whoami(browser) is None and User.objects.count() == 0


def test_a_deactivated_user_stays_out(provider) -> None:
    sign_in(provider, {"sub": "u-5", "preferred_username": "carl"})
    User.objects.filter(username="carl").update(is_active=False)
    browser = sign_in(provider, {"sub": "u-5", "preferred_username": "carl"})
    assert browser.landed == "/login?sso=failed"  # type: ignore[attr-defined]
    assert whoami(browser) is None


def test_platform_rights_follow_the_admin_group_when_one_is_set(provider) -> None:
    with override_settings(OIDC_ADMIN_GROUP="gpu-ops"):
        me = whoami(sign_in(provider, {"sub": "u-6", "preferred_username": "dora",
                                       "groups": ["ml", "gpu-ops"]}))  # fmt: skip
        assert me is not None and me["is_platform_admin"]
        me = whoami(sign_in(provider, {"sub": "u-6", "preferred_username": "dora",
                                       "groups": ["ml"]}))  # fmt: skip
        assert me is not None and not me["is_platform_admin"]


def test_the_login_page_learns_of_sso_and_it_is_off_without_an_issuer(provider) -> None:
    assert Client().get("/api/v1/auth/providers/").json() == {
        "sso": {"name": "Lab SSO", "login_url": "/api/v1/auth/oidc/login/"}
    }
    with override_settings(OIDC_ISSUER=""):
        assert Client().get("/api/v1/auth/providers/").json() == {"sso": None}
        assert Client().get("/api/v1/auth/oidc/login/").status_code == 404
        assert Client().get("/api/v1/auth/oidc/callback/").status_code == 404
