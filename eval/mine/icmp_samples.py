"""Echo requests and replies as pythonping builds them (type, code 0, checksum over the
message, identifier, sequence number, payload), and near misses: each positive with one
byte changed (type, code, checksum, identifier or payload), kept if icmp_check rejects
it. Usage: icmp_samples.py SEED N POS_DIR NEG_DIR. Written for thicket's evaluation."""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(__file__))
from icmp_check import accepts, checksum  # noqa: E402


def echo(rng: random.Random) -> bytes:
    kind = rng.choice((0, 8))
    ident, seq = rng.randrange(1 << 16), rng.randrange(1 << 16)
    payload = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 17)))
    body = ident.to_bytes(2, "big") + seq.to_bytes(2, "big") + payload
    total = checksum(bytes([kind, 0, 0, 0]) + body)
    return bytes([kind, 0]) + total.to_bytes(2, "big") + body


def text(packet: bytes) -> str:
    return "".join(f"{b:02X} " for b in packet)


def main() -> None:
    seed, n, pos_dir, neg_dir = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    rng = random.Random(seed)
    os.makedirs(pos_dir, exist_ok=True)
    os.makedirs(neg_dir, exist_ok=True)
    made_neg = 0
    for i in range(n):
        packet = echo(rng)
        with open(os.path.join(pos_dir, f"{i:03}.txt"), "w") as f:
            f.write(text(packet))
        while True:
            mutant = bytearray(packet)
            at = rng.randrange(len(mutant))
            mutant[at] = rng.randrange(256)
            if not accepts(text(bytes(mutant))):
                break
        with open(os.path.join(neg_dir, f"{made_neg:03}.txt"), "w") as f:
            f.write(text(bytes(mutant)))
        made_neg += 1


if __name__ == "__main__":
    main()
