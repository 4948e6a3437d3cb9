"""Extracts the netlink answers qinq_check reads from an nlmon capture (record.sh makes it) into
hex files, one message payload (after nlmsghdr) per line: links (AF_UNSPEC and AF_BRIDGE),
fdb entries, and the ethtool features replies as DEVICE HEX. Usage: extract.py PCAP OUTDIR"""
import struct, sys, os
pcap, outdir = sys.argv[1], sys.argv[2]
data = open(pcap, 'rb').read()
off = 24
linkinfo, brvlan, fdb, features = [], [], [], []
seen = set()
while off + 16 <= len(data):
    _, _, incl, _ = struct.unpack_from('<IIII', data, off); off += 16
    rec = data[off:off+incl]; off += incl
    proto = struct.unpack_from('>H', rec, 14)[0]
    msgs = rec[16:]
    p = 0
    while p + 16 <= len(msgs):
        length, mtype, flags, seq, pid = struct.unpack_from('<IHHII', msgs, p)
        if length < 16: break
        payload = msgs[p+16:p+length]
        p += (length + 3) & ~3
        dump_part = flags & 2                                    # NLM_F_MULTI: not a notification
        if proto == 0 and mtype == 16 and len(payload) >= 16 and dump_part:   # RTM_NEWLINK
            key = (payload[0], struct.unpack_from('<i', payload, 4)[0])
            if key not in seen:
                seen.add(key)
                (brvlan if payload[0] == 7 else linkinfo).append(payload)
        elif proto == 0 and mtype == 28 and payload[0] == 7 and dump_part:     # RTM_NEWNEIGH, AF_BRIDGE
            if payload not in fdb:
                fdb.append(payload)
        elif proto == 16 and mtype >= 0x10 and len(payload) > 4 and payload[0] == 11 and not (flags & 1):
            attrs = payload[4:]                                  # FEATURES_GET_REPLY
            alen, atype = struct.unpack_from('<HH', attrs, 0)
            header = attrs[4:alen]
            hl, ht = struct.unpack_from('<HH', header, 0)
            name = None
            q = 0
            while q + 4 <= len(header):
                hl, ht = struct.unpack_from('<HH', header, q)
                if ht & 0x3fff == 2:
                    name = header[q+4:q+hl].split(b'\0')[0].decode()
                q += (hl + 3) & ~3
            features.append((name, attrs))
for name, items in (('links', linkinfo), ('bridge_vlans', brvlan), ('fdb', fdb), ('features', features)):
    with open(os.path.join(outdir, name + '.hex'), 'w') as f:
        for item in items:
            if isinstance(item, tuple):
                f.write(item[0] + ' ' + item[1].hex() + '\n')
            else:
                f.write(item.hex() + '\n')
    print(name, len(items))
