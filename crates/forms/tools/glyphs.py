import re,sys,json
def parse(path):
    toks = open(path,'rb').read().decode('latin1').split()
    stack=[]; color=None; pts=[]; fills=[]; rects=[]
    for t in toks:
        if re.match(r'^-?[0-9.]+$', t): stack.append(float(t)); continue
        if t=='k': color=tuple(round(c,3) for c in stack[-4:])
        elif t=='re':
            x,y,w,h=stack[-4:]; rects.append((x,y,w,h)); pts += [(x,y),(x+w,y+h)]
        elif t in ('m','l'): pts.append(tuple(stack[-2:]))
        elif t=='c': pts += [tuple(stack[-2:])]
        elif t in ('f','f*'):
            if pts: fills.append((color, pts, rects))
            pts=[]; rects=[]
        elif t in ('n','S','Q','q'):
            pts=[]; rects=[]
        stack=[]
    return fills
page=sys.argv[1]
fills=parse(f'p{page}_s0.txt')
boxes=[]; glyphs=[]
for col,pts,rects in fills:
    xs=[p[0] for p in pts]; ys=[p[1] for p in pts]
    bb=(min(xs),min(ys),max(xs),max(ys))
    w=bb[2]-bb[0]; h=bb[3]-bb[1]
    if col and col[3]>0.7 and not (len(rects)==1 and len(pts)==2 and (w>150 or h>150)):
        glyphs.append(bb)
    else:
        for r in rects: boxes.append((col,r))
        if not rects: print('nonrect fill', col, bb, file=sys.stderr)
# cluster glyphs into lines
glyphs.sort(key=lambda b:(-(b[1]+b[3])/2, b[0]))
lines=[]
for g in sorted(glyphs, key=lambda b:b[0]):
    placed=False
    for L in lines:
        # vertical overlap with line core and x-adjacent
        cy=(g[1]+g[3])/2
        if L['y0']-5 <= cy <= L['y1']+5 and 0 <= g[0]-L['x1'] < 45 or (L['y0']-5 <= cy <= L['y1']+5 and g[0] < L['x1'] and g[2] > L['x0']):
            L['x1']=max(L['x1'],g[2]); L['gl'].append(g); L['y0']=min(L['y0'], g[1]) if False else L['y0']; L['n']+=1
            L['ymin']=min(L['ymin'],g[1]); L['ymax']=max(L['ymax'],g[3])
            placed=True; break
    if not placed:
        lines.append({'x0':g[0],'x1':g[2],'y0':g[1],'y1':g[3],'ymin':g[1],'ymax':g[3],'gl':[g],'n':1})
out=[]
for L in lines:
    # baseline estimate: most common bottom among glyphs
    bots=sorted(round(g[1]) for g in L['gl'])
    from collections import Counter
    base_sort=Counter(bots).most_common(1)[0][0]; cnt=Counter(bots); top=max(cnt.values()); base=max(b for b,c in cnt.items() if c==top)
    out.append((round(L['x0']/10,1), round(base/10,1), round((L['x1']-L['x0'])/10,1), round((L['ymax']-base)/10,1), L['n'], base_sort))
out.sort(key=lambda o:(-o[5],o[0]))
out=[o[:5] for o in out]
for o in out: print('x=%6.1f base=%6.1f w=%6.1f asc=%4.1f n=%d'%o)
json.dump({'boxes':boxes,'lines':out}, open(f'layout{page}.json','w'))
