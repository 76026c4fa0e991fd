"""The program under test for ICMP: exit 0 iff the file holds an ICMP echo request or
reply (RFC 792: type 8 or 0, code 0) with a valid RFC 1071 checksum, written as hex
bytes separated by spaces (eval/mine/icmp.fan). Written for thicket's evaluation."""
import sys


def checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = 0
    for i in range(0, len(data), 2):
        total += (data[i] << 8) | data[i + 1]
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def accepts(text: str) -> bool:
    try:
        packet = bytes(int(h, 16) for h in text.split())
    except ValueError:
        return False
    if len(packet) < 8 or packet[0] not in (0, 8) or packet[1] != 0:
        return False
    zeroed = packet[:2] + b"\0\0" + packet[4:]
    return checksum(zeroed) == int.from_bytes(packet[2:4], "big")


if __name__ == "__main__":
    with open(sys.argv[1], encoding="ascii", errors="replace") as f:
        sys.exit(0 if accepts(f.read()) else 1)
