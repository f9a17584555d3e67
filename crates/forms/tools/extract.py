import re, zlib, sys
def streams(path):
    data = open(path,'rb').read()
    out=[]
    for m in re.finditer(rb'stream\r?\n', data):
        start = m.end()
        end = data.find(b'endstream', start)
        raw = data[start:end]
        try:
            out.append(zlib.decompress(raw))
        except Exception as e:
            try:
                out.append(zlib.decompressobj().decompress(raw))
            except Exception: pass
    return out
# The folder holding the model PDFs is the first argument (default: this one).
folder = sys.argv[1] if len(sys.argv) > 1 else '.'
for p in (1,2):
    ss = streams(f'{folder}/gewa1-2019-page{p}.pdf')
    for i,s in enumerate(ss):
        print(p, i, len(s), s[:200])
        open(f'p{p}_s{i}.txt','wb').write(s)
