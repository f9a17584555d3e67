import json,sys,math
from collections import deque
R=2 # cells per pt
W=int(468*R)+2; H=int(681*R)+2
def grid(page):
    d=json.load(open(f'layout{page}.json'))
    g=bytearray(W*H)
    def mark(r,v):
        x,y,w,h=[c/10 for c in r]
        x0=int(math.floor(x*R)); x1=int(math.ceil((x+w)*R)); y0=int(math.floor(y*R)); y1=int(math.ceil((y+h)*R))
        for yy in range(max(0,y0),min(H,y1)):
            g[yy*W+max(0,x0):yy*W+min(W,x1)]=bytes([v])*(min(W,x1)-max(0,x0))
    for c,r in d['boxes']:
        if c==[0,0,0,0] and r[2]>4000: continue
        if c==[0,0,0,0]: mark(r,0)
        else: mark(r,1)
    return g
def flood(g,px,py):
    x=int(px/715*467.7*R); y=int((680.3-py/1041*680.3)*R)
    if g[y*W+x]: return None
    seen=set([(x,y)]); q=deque([(x,y)]); xs=[x,x]; ys=[y,y]
    while q:
        cx,cy=q.popleft()
        for nx,ny in ((cx+1,cy),(cx-1,cy),(cx,cy+1),(cx,cy-1)):
            if 0<=nx<W and 0<=ny<H and (nx,ny) not in seen and not g[ny*W+nx]:
                seen.add((nx,ny)); q.append((nx,ny))
                xs[0]=min(xs[0],nx); xs[1]=max(xs[1],nx); ys[0]=min(ys[0],ny); ys[1]=max(ys[1],ny)
        if len(seen)>400000: return 'huge'
    return (xs[0]/R, ys[0]/R, (xs[1]+1)/R, (ys[1]+1)/R)
page=int(sys.argv[1]); g=grid(page)
seeds=json.load(open(f'seeds{page}.json'))
out={}
for name,(px,py) in seeds.items():
    r=flood(g,px,py)
    out[name]=r
    print(name, r)
json.dump(out,open(f'boxes{page}.json','w'))
