import pytest

from hil.console.protocol import parse_fields, parse_final_line
from hil.errors import DutError

pytestmark = pytest.mark.selftest


def test_result_line_fields():
    f = parse_final_line("RESULT iperf role=server proto=tcp status=ok bytes=123 mbps=94.123\r")
    assert f is not None and f.ok and f.kind == "RESULT" and f.command == "iperf"
    assert f.fields["role"] == "server" and f.get_int("bytes") == 123 and f.get_float("mbps") == pytest.approx(94.123)


def test_err_line_keeps_reason():
    f = parse_final_line("ERR iperf bad port 0 (1-65535)")
    assert f is not None and not f.ok and f.command == "iperf" and f.reason == "bad port 0 (1-65535)"


def test_boot_line():
    f = parse_final_line("BOOT name=hil-fw version=v1 target=host")
    assert f is not None and f.kind == "BOOT" and f.fields["target"] == "host"


def test_ordinary_lines_are_not_final():
    assert parse_final_line("[  1]   0.0-  1.0 sec   11 KBytes  94.00 Mbits/sec") is None
    assert parse_final_line("RESULTS are in") is None
    assert parse_final_line("") is None


def test_malformed_fields_are_a_dut_error():
    with pytest.raises(DutError, match="malformed key=value"):
        parse_fields("a=1 garbage")
    with pytest.raises(DutError, match="malformed"):
        parse_final_line("RESULT iperf =1")


def test_missing_field_names_the_key():
    f = parse_final_line("RESULT ping sent=3")
    assert f is not None
    with pytest.raises(DutError, match="lacks received="):
        f.get_int("received")
