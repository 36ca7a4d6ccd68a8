"""What a measurement's window of the wire says of a TCP connection's segment size: the SYNs'
MSS options and the largest segment each way beside the kernel's `ss` figure, with why they
differ (a UDP measurement's loss ledger: hil.wire.ledger)."""

from __future__ import annotations

from hil.wire.watch import WireSeen

TCP_TIMESTAMPS = 12  # the timestamp option (10 bytes, padded to 12) in every segment of a connection using it


def mss_reading(seen: WireSeen, near: str, far: str, pc_sends: bool, ss_mss: int | None) -> dict[str, object] | None:
    """Both SYNs' MSS options and the largest payload each way, read on the PC's side of the wire,
    and why the data direction's segments are the size they are (None: no PC-side capture)."""
    s = seen.summaries.get("pc")
    if s is None:
        return None
    out_way, in_way = s.direction(near, far), s.direction(far, near)
    pc_syn, far_syn = out_way.syn_mss, in_way.syn_mss
    largest = out_way.largest_tcp_payload if pc_sends else in_way.largest_tcp_payload
    reading: dict[str, object] = {
        "syn_mss_pc": pc_syn[-1] if pc_syn else None,
        "syn_mss_far": far_syn[-1] if far_syn else None,
        "largest_payload_pc_to_far": out_way.largest_tcp_payload,
        "largest_payload_far_to_pc": in_way.largest_tcp_payload,
        "ss_mss": ss_mss,
    }
    reading["why"] = explain(reading, largest, pc_sends)
    return reading


def explain(r: dict[str, object], largest: int, pc_sends: bool) -> str:
    """Why the data segments carry `largest` bytes: the smaller SYN MSS, less the options."""
    pc, far = r["syn_mss_pc"], r["syn_mss_far"]
    if not isinstance(pc, int) or not isinstance(far, int):
        return "a SYN was not captured (the connection began before the capture, or it was capped)"
    limit, who = (far, "the far end's") if far <= pc else (pc, "the PC's")
    sender = "PC" if pc_sends else "far end"
    if largest == 0:
        return f"no data segment captured in the {sender}'s direction"
    if largest == limit:
        text = f"the {sender}'s segments fill the smaller SYN MSS, {who} ({limit} B)"
    elif limit - largest == TCP_TIMESTAMPS:
        text = f"{who} SYN MSS {limit} B less {TCP_TIMESTAMPS} B of TCP timestamps in every segment"
    elif largest < limit:
        text = (
            f"{limit - largest} B below the smaller SYN MSS ({who}, {limit} B): the {sender}'s own MSS or its options"
        )
    else:
        text = f"larger than the smaller SYN MSS ({limit} B): segmentation offload before the capture point"
    ss = r.get("ss_mss")
    if isinstance(ss, int) and ss != largest:
        text += f"; the kernel's ss says {ss} B (its estimate, not the wire's)"
    return text
