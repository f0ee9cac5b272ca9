#!/usr/bin/env bash
# Makes a private CA, a server certificate and one client certificate per host
# for tracehealth's TLS / mTLS, with openssl.
#
#   deploy/tls/make-certs.sh OUT_DIR SERVER_NAME [HOST_ID ...]
#
# OUT_DIR/ca.{crt,key}             the CA (keep ca.key offline)
# OUT_DIR/server.{crt,key}         for tracehealth-server --tls_cert/--tls_key;
#                                  SANs: SERVER_NAME, localhost, 127.0.0.1, ::1
# OUT_DIR/hosts/HOST_ID.{crt,key}  for tracehealth-agent --tls_cert/--tls_key;
#                                  CN and SAN DNS = HOST_ID, which is the
#                                  identity the server enforces: a client may
#                                  only report as the host its certificate names.
# Existing CA and certificates are kept (re-running adds new hosts only).
# Keys are EC P-256; certificates are valid for DAYS (default 825) days.
set -euo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 OUT_DIR SERVER_NAME [HOST_ID ...]" >&2
  exit 2
fi
out=$1
server_name=$2
shift 2
days=${DAYS:-825}
valid_id='^[A-Za-z0-9._-]{1,253}$'

mkdir -p "$out/hosts"
umask 077

if [[ ! -f "$out/ca.key" ]]; then
  openssl ecparam -name prime256v1 -genkey -noout -out "$out/ca.key"
  openssl req -x509 -new -key "$out/ca.key" -sha256 -days "$days" \
    -subj "/CN=tracehealth CA" \
    -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -out "$out/ca.crt"
fi

# issue NAME KEY CRT SAN EKU
issue() {
  local cn=$1 key=$2 crt=$3 san=$4 eku=$5
  local ext
  ext=$(mktemp)
  printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=%s\nsubjectAltName=%s\n' \
    "$eku" "$san" > "$ext"
  openssl ecparam -name prime256v1 -genkey -noout -out "$key"
  openssl req -new -key "$key" -subj "/CN=$cn" -out "$key.csr"
  openssl x509 -req -in "$key.csr" -CA "$out/ca.crt" -CAkey "$out/ca.key" \
    -CAcreateserial -sha256 -days "$days" -extfile "$ext" -out "$crt" 2>/dev/null
  rm -f "$key.csr" "$ext"
}

if [[ ! -f "$out/server.crt" ]]; then
  issue "$server_name" "$out/server.key" "$out/server.crt" \
    "DNS:$server_name,DNS:localhost,IP:127.0.0.1,IP:::1" serverAuth
fi

for host in "$@"; do
  if [[ ! $host =~ $valid_id ]]; then
    echo "make-certs: invalid host id '$host' (want [A-Za-z0-9._-]{1,253})" >&2
    exit 2
  fi
  if [[ ! -f "$out/hosts/$host.crt" ]]; then
    issue "$host" "$out/hosts/$host.key" "$out/hosts/$host.crt" "DNS:$host" clientAuth
  fi
done
chmod 644 "$out/ca.crt" "$out/server.crt" "$out"/hosts/*.crt 2>/dev/null || true
echo "make-certs: CA, server '$server_name' and $# host certificate(s) in $out"
