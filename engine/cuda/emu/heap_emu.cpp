// heap_emu.cpp - tree_build.cu best-first heap (warp argmax, tie walk) against the reference rank-tuple rule, on tie-heavy cases.
#include <cstdio>
#include <algorithm>
#include <cstdlib>
#include <vector>
#include <random>
#include <cmath>
// my tb_tree heap (transcribed) vs the CPU reference frontier scan, with many exact ties
struct Sh { std::vector<int> np,nd,nr; std::vector<float> nl; };
static int rank_at(const Sh&t,int p,int r,int dc,int d){ if(d==dc) return r; int node=p; while(t.nd[node]>d) node=t.np[node]; return t.nr[node];}
static bool tie_before(const Sh&t,int pa,int ra,int da,int pb,int rb,int db){int m=std::min(da,db); for(int d=1;d<=m;d++){int x=rank_at(t,pa,ra,da,d),y=rank_at(t,pb,rb,db,d); if(x!=y) return x<y;} return da<db;}
struct C{float s;int p,d,r,i;};
static bool before(const Sh&t,const C&a,const C&b){ if(a.i<0) return false; if(b.i<0) return true; if(a.s!=b.s) return a.s>b.s; return tie_before(t,a.p,a.r,a.d,b.p,b.r,b.d);}
// reference tie (CPU engineer's rank tuples)
static void tuple(const Sh&t,int p,int r,std::vector<int>&o){o.clear(); o.push_back(r); for(int x=p;x>0;x=t.np[x]) o.push_back(t.nr[x]); std::reverse(o.begin(),o.end());}
int main(){ int bad=0;
 for(int trial=0;trial<2000;trial++){ std::mt19937 rng(trial); int L=1+rng()%6, K=1+rng()%6, B=1+rng()%40;
  std::vector<float> lp(L*K); for(int d=0;d<L;d++){ float v=0; for(int r=0;r<K;r++){ v-= (rng()%3)*0.5f; lp[d*K+r]=v-(rng()%2);} std::sort(lp.begin()+d*K,lp.begin()+d*K+K,[](float a,float b){return a>b;});}
  // mine
  Sh t; t.np={-1}; t.nd={0}; t.nr={0}; t.nl={0};
  std::vector<C> fr={{lp[0],0,1,0,0}}; int n=1;
  while(n<=B && !fr.empty()){ C best={0,0,0,0,-1}; for(size_t i=0;i<fr.size();i++){C c=fr[i]; c.i=i; if(before(t,c,best)) best=c;}
    C e=best; fr[e.i]=fr.back(); fr.pop_back(); int i=n; t.np.push_back(e.p); t.nd.push_back(e.d); t.nr.push_back(e.r); t.nl.push_back(e.s);
    if(e.r+1<K) fr.push_back({t.nl[e.p]+lp[(e.d-1)*K+e.r+1],e.p,e.d,e.r+1,0}); if(e.d<L) fr.push_back({e.s+lp[e.d*K],i,e.d+1,0,0}); n++;}
  // reference
  Sh u; u.np={-1}; u.nd={0}; u.nr={0}; u.nl={0}; struct RC{float s;int p,d,r;}; std::vector<RC> f={{lp[0],0,1,0}}; int m=1; std::vector<int> ta,tb;
  while(m<=B && !f.empty()){ int b=0; for(size_t i=1;i<f.size();i++){ bool tb_; if(f[i].s!=f[b].s) tb_=f[i].s>f[b].s; else { tuple(u,f[i].p,f[i].r,ta); tuple(u,f[b].p,f[b].r,tb); tb_= std::lexicographical_compare(ta.begin(),ta.end(),tb.begin(),tb.end());} if(tb_) b=i;}
    RC e=f[b]; f[b]=f.back(); f.pop_back(); int i=m++; u.np.push_back(e.p); u.nd.push_back(e.d); u.nr.push_back(e.r); u.nl.push_back(e.s);
    if(e.r+1<K) f.push_back({u.nl[e.p]+lp[(e.d-1)*K+e.r+1],e.p,e.d,e.r+1}); if(e.d<L) f.push_back({e.s+lp[e.d*K],i,e.d+1,0});}
  if(n!=m || t.np!=u.np || t.nr!=u.nr || t.nd!=u.nd) bad++; }
 printf("heap mismatches: %d of 2000\n",bad); return bad!=0;}
