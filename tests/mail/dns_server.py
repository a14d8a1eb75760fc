"""A real, authoritative-style DNS server on loopback for the mail tests.

Speaks UDP and TCP (RFC 1035 4.2) with dnspython's wire format; answers from
a dict the test fills, so tests can publish correct, missing and wrong
records and point DNS_RESOLVERS at it. Responses larger than 512 bytes over
UDP without EDNS are truncated (TC), so clients retry over TCP as for real.
"""

from __future__ import annotations

import asyncio
import contextlib
import struct
from collections.abc import Iterable

import dns.exception
import dns.flags
import dns.message
import dns.name
import dns.rcode
import dns.rdataclass
import dns.rdatatype
import dns.rrset

from common.mail_settings import Nameserver
from mail.dns.records import Record


class DnsServer:
    def __init__(self) -> None:
        # (absolute lower-case name with trailing dot, TYPE) -> RDATA in presentation form
        self.records: dict[tuple[str, str], list[str]] = {}
        self.queries: list[tuple[str, str]] = []
        self.port = 0
        self._udp: asyncio.DatagramTransport | None = None
        self._tcp: asyncio.base_events.Server | None = None

    # --- what the test publishes ---

    def add(self, name: str, rtype: str, *rdata: str, replace: bool = False) -> None:
        key = (name.rstrip(".").lower() + ".", rtype.upper())
        if replace:
            self.records[key] = []
        self.records.setdefault(key, []).extend(rdata)

    def remove(self, name: str, rtype: str) -> None:
        self.records.pop((name.rstrip(".").lower() + ".", rtype.upper()), None)

    def publish(self, records: Iterable[Record]) -> None:
        """Publish a record set exactly as the panel expects it."""
        for record in records:
            self.add(record.name, record.type, record.rdata_text)

    # --- answering ---

    def answer(self, wire: bytes, *, tcp: bool) -> bytes | None:
        try:
            query = dns.message.from_wire(wire)
        except Exception:
            return None
        response = dns.message.make_response(query)
        response.flags |= dns.flags.AA | dns.flags.RA
        if not query.question:
            response.set_rcode(dns.rcode.FORMERR)
            return response.to_wire()
        question = query.question[0]
        qname = question.name.to_text().lower()
        qtype = dns.rdatatype.to_text(question.rdtype)
        self.queries.append((qname, qtype))
        name_exists = any(n == qname for n, _ in self.records)
        cname = self.records.get((qname, "CNAME"))
        if qtype != "CNAME" and cname:
            response.answer.append(self._rrset(qname, "CNAME", cname))
            target = cname[0].lower()
            values = self.records.get((target, qtype))
            if values:
                response.answer.append(self._rrset(target, qtype, values))
        else:
            values = self.records.get((qname, qtype))
            if values:
                response.answer.append(self._rrset(qname, qtype, values))
            elif not name_exists:
                response.set_rcode(dns.rcode.NXDOMAIN)
        max_size = 65535 if tcp else max(512, query.payload if query.edns >= 0 else 512)
        return response.to_wire(max_size=max_size)

    @staticmethod
    def _rrset(name: str, rtype: str, values: list[str]) -> dns.rrset.RRset:
        return dns.rrset.from_text_list(
            dns.name.from_text(name), 300, dns.rdataclass.IN, rtype, values
        )

    # --- serving ---

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        server = self

        class Udp(asyncio.DatagramProtocol):
            def connection_made(self, transport: asyncio.BaseTransport) -> None:
                self.transport = transport

            def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
                try:
                    reply = server.answer(data, tcp=False)
                except dns.exception.TooBig:
                    reply = server._truncated(data)
                if reply is not None:
                    self.transport.sendto(reply, addr)  # type: ignore[attr-defined]

        # UDP and TCP on one port: take a free UDP port, retry if its TCP twin is taken.
        for _ in range(50):
            transport, _ = await loop.create_datagram_endpoint(Udp, local_addr=("127.0.0.1", 0))
            port = transport.get_extra_info("sockname")[1]
            try:
                self._tcp = await asyncio.start_server(self._serve_tcp, "127.0.0.1", port)
            except OSError:
                transport.close()
                continue
            self._udp = transport  # type: ignore[assignment]
            self.port = port
            return
        raise RuntimeError("no free port for the test DNS server")

    def _truncated(self, wire: bytes) -> bytes:
        query = dns.message.from_wire(wire)
        response = dns.message.make_response(query)
        response.flags |= dns.flags.TC
        return response.to_wire()

    async def _serve_tcp(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                header = await reader.readexactly(2)
                (length,) = struct.unpack("!H", header)
                reply = self.answer(await reader.readexactly(length), tcp=True)
                if reply is None:
                    break
                writer.write(struct.pack("!H", len(reply)) + reply)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def stop(self) -> None:
        if self._udp is not None:
            self._udp.close()
        if self._tcp is not None:
            self._tcp.close()
            await self._tcp.wait_closed()

    @property
    def resolver_setting(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def nameserver(self) -> Nameserver:
        return Nameserver("127.0.0.1", self.port)
