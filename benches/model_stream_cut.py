"""Paired check of the host's streamed line cut (issue 28): each request that
`typist bench model` captured (OUT/ASSISTANT/requests.jsonl) is sent to one fresh
llama-server twice, whole and then streamed and left at the line end (the order
alternating), and the times and the cut lines compared.

    python3 benches/model_stream_cut.py OUT/smollm2/requests.jsonl 1

Arguments: the requests file, llama-server's -t. The cut here is "the first line break
after the first non-blank character", which is never earlier than the host's.
"""
import json, os, sys, time, subprocess, socket, http.client
reqs=[json.loads(l) for l in open(sys.argv[1])]
threads=sys.argv[2]; extra=sys.argv[3:]
s=socket.socket(); s.bind(('127.0.0.1',0)); port=s.getsockname()[1]; s.close()
ROOT=os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
M=os.path.join(ROOT,'.servers/models/SmolLM2-135M-Instruct.Q4_1.gguf')
p=subprocess.Popen([os.path.join(ROOT,'.servers/llama/bin/llama-server'),'-m',M,'--host','127.0.0.1','--port',str(port),'-t',threads,'-c','2048','--parallel','1','--no-webui','--no-cache-prompt']+extra,stdout=subprocess.DEVNULL,stderr=subprocess.DEVNULL)
while True:
    try:
        c=http.client.HTTPConnection('127.0.0.1',port); c.request('GET','/health'); r=c.getresponse()
        if r.status==200: break
    except Exception: pass
    time.sleep(0.2)
def cut_point(t):
    i=0
    while i<len(t) and t[i] in ' \t\n': i+=1
    return t.find('\n',i)
def plain(body):
    c=http.client.HTTPConnection('127.0.0.1',port); c.request('POST','/v1/completions',json.dumps(body),{'Content-Type':'application/json'})
    v=json.loads(c.getresponse().read()); return v['choices'][0]['text']
def stream(body):
    body=dict(body); body['stream']=True
    c=http.client.HTTPConnection('127.0.0.1',port); c.request('POST','/v1/completions',json.dumps(body),{'Content-Type':'application/json'})
    resp=c.getresponse(); acc=''
    while True:
        line=resp.fp.readline()
        if not line: break
        line=line.strip()
        if not line.startswith(b'data:'): continue
        d=line[5:].strip()
        if d==b'[DONE]': break
        acc+=json.loads(d)['choices'][0].get('text','')
        if cut_point(acc)>=0: break
    c.close(); return acc
T={'plain':0,'stream':0}; same=0
for k,r in enumerate(reqs):
    body=json.loads(r['body'])
    order=[('plain',plain),('stream',stream)]
    if k%2: order.reverse()
    out={}
    for name,f in order:
        t=time.time(); out[name]=f(body); T[name]+=time.time()-t
    def cut(t):
        j=cut_point(t); return t if j<0 else t[:j]
    same+= cut(out['plain'])==cut(out['stream'])
p.terminate(); p.wait()
n=len(reqs)
print(f"threads={threads} n={n} plain_s={T['plain']:.1f} ({n/T['plain']*3600:.0f}/h) stream_s={T['stream']:.1f} ({n/T['stream']*3600:.0f}/h) ratio={T['plain']/T['stream']:.2f} same={same}")
