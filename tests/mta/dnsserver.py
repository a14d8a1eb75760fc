"""A tiny authoritative DNS server on the loopback, for SPF, DKIM and DMARC tests.

Runs in a thread (so a daemon in another process can use it too) and answers
from a dict the test fills: ``server.add("sel._domainkey.example.test", "TXT", "v=DKIM1; ...")``.
Unknown names answer NXDOMAIN.
"""

from __future__ import annotations

import socket
import threading
from collections import defaultdict

import dns.flags
import dns.message
import dns.name
import dns.rcode
import dns.rdata
import dns.rdataclass
import dns.rdatatype
import dns.rrset

from common.mail_settings import Nameserver


class LoopbackDNS:
    def __init__(self) -> None:
        self.records: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = int(self.sock.getsockname()[1])
        self.queries: list[tuple[str, str]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def nameserver(self) -> Nameserver:
        return Nameserver("127.0.0.1", self.port)

    def add(self, name: str, rdtype: str, value: str) -> None:
        if rdtype == "TXT":
            # TXT strings are at most 255 bytes: split long values the way DNS zones do.
            chunks = [value[i : i + 200] for i in range(0, len(value), 200)] or [""]
            value = " ".join('"' + c.replace('"', '\\"') + '"' for c in chunks)
        self.records[name.lower().rstrip(".")][rdtype].append(value)

    def start(self) -> LoopbackDNS:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self.sock.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                data, peer = self.sock.recvfrom(4096)
            except (TimeoutError, OSError):
                continue
            try:
                query = dns.message.from_wire(data)
            except Exception:
                continue
            self.sock.sendto(self._answer(query).to_wire(), peer)

    def _answer(self, query: dns.message.Message) -> dns.message.Message:
        response = dns.message.make_response(query)
        response.flags |= dns.flags.AA
        question = query.question[0]
        name = question.name.to_text().rstrip(".").lower()
        rdtype = dns.rdatatype.to_text(question.rdtype)
        self.queries.append((name, rdtype))
        if name not in self.records:
            response.set_rcode(dns.rcode.NXDOMAIN)
            # An SOA in the authority section, as real servers send: resolvers cache
            # the NXDOMAIN for its minimum TTL (RFC 2308).
            zone = dns.name.from_text(name.rsplit(".", 1)[-1] + ".")
            soa = dns.rrset.RRset(zone, dns.rdataclass.IN, dns.rdatatype.SOA)
            soa.add(
                dns.rdata.from_text(
                    dns.rdataclass.IN,
                    dns.rdatatype.SOA,
                    "ns.invalid. host.invalid. 1 3600 600 86400 60",
                ),
                ttl=60,
            )
            response.authority.append(soa)
            return response
        values = self.records[name].get(rdtype, [])
        if values:
            rrset = dns.rrset.RRset(question.name, dns.rdataclass.IN, question.rdtype)
            for value in values:
                rrset.add(dns.rdata.from_text(dns.rdataclass.IN, question.rdtype, value), ttl=60)
            response.answer.append(rrset)
        return response
