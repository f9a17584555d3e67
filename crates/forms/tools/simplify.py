# Simplifies the rectangle lists of the model form without changing what is painted:
# drops rectangles covered by another of the same colour and merges touching rectangles that
# share both edges of the other axis. Coordinates are rounded to 0.05 pt (0.06 pt on A4).
def rnd(v): return round(v*20)/20
def norm(rs):
    out=[]
    for x,y,w,h in rs:
        x0,y0,x1,y1=rnd(x),rnd(y),rnd(x+w),rnd(y+h)
        if x1>x0 and y1>y0: out.append((x0,y0,x1,y1))
    return out
def covered(a,b): return b[0]<=a[0] and b[1]<=a[1] and b[2]>=a[2] and b[3]>=a[3]
def dedupe(rs):
    rs=sorted(set(rs), key=lambda r:-(r[2]-r[0])*(r[3]-r[1]))
    keep=[]
    for r in rs:
        if not any(covered(r,k) for k in keep): keep.append(r)
    return keep
def merge(rs):
    changed=True
    rs=list(rs)
    while changed:
        changed=False
        rs.sort()
        out=[]
        used=[False]*len(rs)
        for i,a in enumerate(rs):
            if used[i]: continue
            for j in range(i+1,len(rs)):
                if used[j]: continue
                b=rs[j]
                # same vertical extent, touching/overlapping horizontally
                if a[1]==b[1] and a[3]==b[3] and b[0]<=a[2]+0.06 and b[2]>=a[0]-0.06:
                    a=(min(a[0],b[0]),a[1],max(a[2],b[2]),a[3]); used[j]=True; changed=True
                elif a[0]==b[0] and a[2]==b[2] and b[1]<=a[3]+0.06 and b[3]>=a[1]-0.06:
                    a=(a[0],min(a[1],b[1]),a[2],max(a[3],b[3])); used[j]=True; changed=True
            out.append(a)
        rs=out
    return rs
def simplify(rs):
    r=merge(dedupe(norm(rs)))
    return [(x0,y0,x1-x0,y1-y0) for x0,y0,x1,y1 in r]
