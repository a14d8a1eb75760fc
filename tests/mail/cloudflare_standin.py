"""A local server speaking Cloudflare's documented v4 API, for the publish tests.

Implements what the publisher calls: ``GET /zones?name=``, ``GET
/zones/:id/dns_records`` (paginated, ``result_info``) and ``POST
/zones/:id/dns_records``, each answering Cloudflare's envelope ``{success,
errors, messages, result}``. Authentication is ``Authorization: Bearer``;
a wrong token gets Cloudflare's 403 with error code 10000. Every record
created is kept in ``created`` exactly as posted.
"""

from __future__ import annotations

import secrets
from typing import Any

from aiohttp import web

PREFIX = "/client/v4"


def envelope(
    result: Any,
    *,
    success: bool = True,
    errors: list[dict[str, Any]] | None = None,
    result_info: dict[str, Any] | None = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "success": success,
        "errors": errors or [],
        "messages": [],
        "result": result,
    }
    if result_info is not None:
        body["result_info"] = result_info
    return body


class CloudflareStandIn:
    def __init__(self, token: str) -> None:
        self.token = token
        self.zones: dict[str, dict[str, Any]] = {}
        self.records: dict[str, list[dict[str, Any]]] = {}
        self.created: list[dict[str, Any]] = []
        self.authorizations: list[str] = []
        # Set to make the next record creation fail as Cloudflare would.
        self.fail_create: dict[str, Any] | None = None

    def add_zone(self, name: str) -> str:
        zone_id = secrets.token_hex(16)
        self.zones[zone_id] = {"id": zone_id, "name": name, "status": "active"}
        self.records[zone_id] = []
        return zone_id

    def add_record(self, zone_id: str, **record: Any) -> None:
        record.setdefault("id", secrets.token_hex(16))
        record.setdefault("ttl", 1)
        self.records[zone_id].append(record)

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get(PREFIX + "/zones", self.list_zones)
        app.router.add_get(PREFIX + "/zones/{zone_id}/dns_records", self.list_records)
        app.router.add_post(PREFIX + "/zones/{zone_id}/dns_records", self.create_record)
        return app

    def _authorized(self, request: web.Request) -> bool:
        header = request.headers.get("Authorization", "")
        self.authorizations.append(header)
        return header == f"Bearer {self.token}"

    def _denied(self) -> web.Response:
        return web.json_response(
            envelope(
                None, success=False, errors=[{"code": 10000, "message": "Authentication error"}]
            ),
            status=403,
        )

    async def list_zones(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return self._denied()
        name = request.query.get("name")
        zones = [z for z in self.zones.values() if name is None or z["name"] == name]
        info = {
            "page": 1,
            "per_page": 20,
            "count": len(zones),
            "total_count": len(zones),
            "total_pages": 1,
        }
        return web.json_response(envelope(zones, result_info=info))

    async def list_records(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return self._denied()
        zone_id = request.match_info["zone_id"]
        if zone_id not in self.records:
            return web.json_response(
                envelope(
                    None, success=False, errors=[{"code": 7003, "message": "Could not route"}]
                ),
                status=404,
            )
        page = int(request.query.get("page", "1"))
        per_page = int(request.query.get("per_page", "100"))
        items = self.records[zone_id]
        chunk = items[(page - 1) * per_page : page * per_page]
        total_pages = max(1, -(-len(items) // per_page))
        info = {
            "page": page,
            "per_page": per_page,
            "count": len(chunk),
            "total_count": len(items),
            "total_pages": total_pages,
        }
        return web.json_response(envelope(chunk, result_info=info))

    async def create_record(self, request: web.Request) -> web.Response:
        if not self._authorized(request):
            return self._denied()
        zone_id = request.match_info["zone_id"]
        body = await request.json()
        if self.fail_create is not None:
            error, self.fail_create = self.fail_create, None
            return web.json_response(envelope(None, success=False, errors=[error]), status=400)
        self.created.append(body)
        record = dict(body)
        if record["type"] == "SRV":
            d = record["data"]
            record["content"] = f"{d['weight']} {d['port']} {d['target']}"
            record["priority"] = d["priority"]
        self.add_record(zone_id, **record)
        return web.json_response(envelope(self.records[zone_id][-1]))
