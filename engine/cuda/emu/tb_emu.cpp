// tb_emu.cpp - tree_build.cu stage 1 (warp top-K lists, logsumexp, merge) transcribed and checked against a full sort.
#include "common.h"
#include <algorithm>
typedef unsigned long long u64;
static u64 tb_key(float v,int idx){uint32_t u; memcpy(&u,&v,4); u=(u&0x80000000u)?~u:(u|0x80000000u); return ((u64)u<<32)|(uint32_t)~(uint32_t)idx;}
static float tb_key_val(u64 k){uint32_t u=(uint32_t)(k>>32); u=(u&0x80000000u)?(u&0x7fffffffu):~u; float f; memcpy(&f,&u,4); return f;}
static int tb_key_tok(u64 k){return (int)~(uint32_t)k;}
template<int J> struct List { u64 e[32][J]; u64 thr;
  void init(){for(int l=0;l<32;l++)for(int j=0;j<J;j++)e[l][j]=0; thr=0;}
  void update_thr(int K){int idx=K-1,jl=idx%J; thr=e[idx/J][jl];}
  void insert(u64 x,int K){ int pos=0; for(int l=0;l<32;l++) for(int j=0;j<J;j++) pos+= e[l][j]>x;
    u64 prev_last[32]; for(int l=0;l<32;l++) prev_last[l]= l? e[l-1][J-1] : e[0][J-1];
    for(int l=0;l<32;l++) for(int j=J-1;j>=0;j--){int i=l*J+j; u64 before= j>0? e[l][j-1] : prev_last[l]; if(i==pos) e[l][j]=x; else if(i>pos) e[l][j]=before;}
    update_thr(K);}
  void offer(const u64 mine[32],int K){ unsigned m=0; for(int l=0;l<32;l++) if(mine[l]>thr) m|=1u<<l; while(m){int src=__builtin_ffs(m)-1; m&=m-1; u64 x=mine[src]; if(x>thr) insert(x,K);}}
};
struct Ref { std::vector<float> logp; std::vector<int> tok; };
template<int J> int run(int L,int V,int B,unsigned seed){
  std::mt19937 rng(seed); std::normal_distribution<float> N(0,1.5f);
  std::vector<float> x((size_t)L*V); for(auto&v:x) v=N(rng); for(int d=0;d<L;d++){int hot=1+rng()%4; for(int i=0;i<hot;i++) x[(size_t)d*V+rng()%V]+=4+8*(rng()%1000)/1000.f;}
  // quantize some to create ties
  for(size_t i=0;i<x.size();i+=3) x[i]=roundf(x[i]*4)/4;
  int K=std::min(B,V); int S= V>=8*4096?8: V>=4096? V/4096:1; int seg=(V+S-1)/S; int lists=S*8;
  std::vector<u64> part((size_t)L*lists*K); std::vector<float> pm((size_t)L*lists), psum((size_t)L*lists);
  for(int d=0;d<L;d++) for(int s=0;s<S;s++) for(int warp=0;warp<8;warp++){
    int seg_lo=s*seg, seg_hi=std::min(V,seg_lo+seg); int sub=(seg+8*32-1)/(8*32)*32; int lo=seg_lo+warp*sub, hi=std::min(seg_hi,lo+sub);
    List<J> list; list.init(); float m[32],sm[32]; for(int l=0;l<32;l++){m[l]=-INFINITY;sm[l]=0;}
    for(int base=lo;base<hi;base+=32*8) for(int u=0;u<8;u++){ u64 mine[32]; for(int l=0;l<32;l++){int i=base+u*32+l; float v= i<hi? x[(size_t)d*V+i]:-INFINITY; if(v!=-INFINITY){ if(v>m[l]){sm[l]=sm[l]*expf(m[l]-v)+1;m[l]=v;} else sm[l]+=expf(v-m[l]);} mine[l]= i<hi&&v!=-INFINITY? tb_key(v,i):0;} list.offer(mine,K);}
    float M=-INFINITY,Ssum=0; for(int l=0;l<32;l++){ if(m[l]==-INFINITY) continue; if(M==-INFINITY){M=m[l];Ssum=sm[l];continue;} float mm=std::max(M,m[l]); Ssum=Ssum*expf(M-mm)+sm[l]*expf(m[l]-mm); M=mm;}
    int li=s*8+warp; for(int l=0;l<32;l++) for(int j=0;j<J;j++){int i=l*J+j; if(i<K) part[((size_t)d*lists+li)*K+i]=list.e[l][j];} pm[(size_t)d*lists+li]=M; psum[(size_t)d*lists+li]=Ssum;}
  std::vector<float> lp((size_t)L*K); std::vector<int> tok((size_t)L*K);
  for(int d=0;d<L;d++){ List<J> list; list.init(); int total=lists*K; for(int i0=0;i0<total;i0+=32){u64 mine[32]; for(int l=0;l<32;l++){int i=i0+l; mine[l]= i<total? part[(size_t)d*lists*K+i]:0;} list.offer(mine,K);}
    double M=-INFINITY; for(int i=0;i<lists;i++) if(pm[(size_t)d*lists+i]>M) M=pm[(size_t)d*lists+i]; float Mf=(float)M; float Ssum=0; for(int i=0;i<lists;i++){float mm=pm[(size_t)d*lists+i]; if(mm==-INFINITY) continue; Ssum+=psum[(size_t)d*lists+i]*expf(mm-Mf);}
    double lse=(double)Mf+log((double)Ssum);
    for(int l=0;l<32;l++) for(int j=0;j<J;j++){int r=l*J+j; if(r<K){lp[(size_t)d*K+r]=(float)((double)tb_key_val(list.e[l][j])-lse); tok[(size_t)d*K+r]=tb_key_tok(list.e[l][j]);}}}
  // reference top-k
  int bad=0; double maxlp=0;
  for(int d=0;d<L;d++){ std::vector<std::pair<float,int>> all(V); double mx=-INFINITY,sum=0; for(int v=0;v<V;v++){all[v]={x[(size_t)d*V+v],v}; mx=std::max(mx,(double)x[(size_t)d*V+v]);} for(int v=0;v<V;v++) sum+=exp((double)x[(size_t)d*V+v]-mx); double lse=mx+log(sum);
    std::sort(all.begin(),all.end(),[](auto&a,auto&b){return a.first!=b.first? a.first>b.first : a.second<b.second;});
    for(int r=0;r<K;r++){ if(all[r].second!=tok[(size_t)d*K+r]) bad++; maxlp=std::max(maxlp,fabs((float)((double)all[r].first-lse)-lp[(size_t)d*K+r]));}}
  printf("J=%d L=%d V=%d B=%d K=%d S=%d: top-K token mismatches %d, max logp diff %.3g\n",J,L,V,B,K,S,bad,maxlp);
  return bad!=0 || maxlp>1e-4;
}
int main(){ int f=0; f|=run<1>(3,1000,8,1); f|=run<1>(15,163840,32,2); f|=run<4>(5,70001,100,3); f|=run<32>(2,3001,300,4); f|=run<1>(1,20,40,5); f|=run<1>(4,50000,1,6); return f;}
