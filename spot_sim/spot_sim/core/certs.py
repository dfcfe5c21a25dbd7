"""Generate (once) the simulated robot's CA and its ``*.spot.robot`` server certificate."""

import datetime
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

CA_CERT = "ca.crt"
SERVER_CERT = "server.crt"
SERVER_KEY = "server.key"
_VALIDITY = datetime.timedelta(days=3650)


@dataclass(frozen=True)
class CertPaths:
    """Files of one certificate directory."""

    ca_cert: Path
    server_cert: Path
    server_key: Path


def ensure_certificates(certs_dir: str | os.PathLike) -> CertPaths:
    """Create the CA and server certificate in ``certs_dir`` unless they already exist."""
    directory = Path(certs_dir)
    paths = CertPaths(directory / CA_CERT, directory / SERVER_CERT, directory / SERVER_KEY)
    if all(p.exists() for p in (paths.ca_cert, paths.server_cert, paths.server_key)):
        return paths
    directory.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC) - datetime.timedelta(minutes=5)

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Simulated Spot Root CA")])
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + _VALIDITY)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True, key_cert_sign=True, crl_sign=True,
                content_commitment=False, key_encipherment=False, data_encipherment=False,
                key_agreement=False, encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )

    server_key = ec.generate_private_key(ec.SECP256R1())
    server_cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "*.spot.robot")]))
        .issuer_name(ca_name)
        .public_key(server_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + _VALIDITY)
        .add_extension(
            x509.SubjectAlternativeName([
                x509.DNSName("*.spot.robot"),
                x509.DNSName("localhost"),
                x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
            ]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )

    _write(paths.server_key, server_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption()), private=True)
    _write(paths.server_cert, server_cert.public_bytes(serialization.Encoding.PEM))
    _write(paths.ca_cert, ca_cert.public_bytes(serialization.Encoding.PEM))
    return paths


def _write(path: Path, data: bytes, private: bool = False) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_bytes(data)
    if private:
        tmp.chmod(0o600)
    tmp.replace(path)
