// moe_emu.cpp - moe_w4a16.cu transcribed onto the warp emulator (repack, dequant, both GEMMs, shared expert) against a double reference. usage: moe_emu M hidden inter experts topk group shared_inter
#include "common.h"
// transcription of engine/cuda/moe_w4a16.cu (pack, route, gemm1, gemm2, finalize) with warp emulation
static int tile_row(int mode,int t,int r,int n){ if(mode==0){int j=8*t+(r&7); return j<n?(r<8?j:n+j):-1;} int j=16*t+r; return j<n?j:-1;}
static uint32_t src_nib(const uint8_t*w,long long rb,int row,int k,int K){ if(row<0||k>=K) return 8; uint8_t b=w[(rb+row)*(long long)(K/2)+k/2]; return k&1? b>>4 : b&15u;}
static void pack_q4(uint32_t*dw,const uint8_t*w,int E,int src_rows,int K,int ntiles,int KT,int mode,int n){
  long long total=(long long)E*ntiles*KT*128;
  for(long long i=0;i<total;i++){int j=(int)(i&3),l=(int)((i>>2)&31); long long rest=i>>7; int kt=(int)(rest%KT); rest/=KT; int t=(int)(rest%ntiles),e=(int)(rest/ntiles);
    int r=l>>2,c=l&3,g=j>>1,hh=j&1; int kb=kt*64+32*g+8*c+4*hh; int r0=tile_row(mode,t,r,n),r1=tile_row(mode,t,r+8,n); long long base=(long long)e*src_rows;
    uint32_t v=src_nib(w,base,r0,kb,K)|src_nib(w,base,r1,kb,K)<<4|src_nib(w,base,r0,kb+2,K)<<8|src_nib(w,base,r1,kb+2,K)<<12|src_nib(w,base,r0,kb+1,K)<<16|src_nib(w,base,r1,kb+1,K)<<20|src_nib(w,base,r0,kb+3,K)<<24|src_nib(w,base,r1,kb+3,K)<<28;
    dw[i]=v;}}
static void pack_scales(uint16_t*ds,const uint16_t*s,int E,int src_rows,int K,int group,int ntiles,int KT,int mode,int n){
  long long total=(long long)E*ntiles*KT*32; int ng=K/group;
  for(long long i=0;i<total;i++){int q=(int)(i&3),r=(int)((i>>2)&7); long long rest=i>>5; int kt=(int)(rest%KT); rest/=KT; int t=(int)(rest%ntiles),e=(int)(rest/ntiles);
    int row=tile_row(mode,t,q<2?r:r+8,n); int k=kt*64+32*(q&1); uint16_t v=0; if(row>=0&&k<K) v=s[((long long)e*src_rows+row)*ng+k/group]; ds[i]=v;}}
static void pack_bf16(uint16_t*dw,const uint16_t*w,int K,int ntiles,int KT,int mode,int n){
  long long total=(long long)ntiles*KT*4*32*8;
  for(long long i=0;i<total;i++){int v=(int)(i&7),l=(int)((i>>3)&31),j=(int)((i>>8)&3); long long rest=i>>10; int kt=(int)(rest%KT),t=(int)(rest/KT);
    int r=l>>2,c=l&3,g=j>>1,hh=j&1; int kb=kt*64+32*g+8*c+4*hh; int row=tile_row(mode,t,(v&2)?r+8:r,n); int k=kb+(v&1)+((v&4)?2:0);
    dw[i]= row>=0&&k<K? w[(long long)row*K+k]:(uint16_t)0;}}
static void dequant8(uint32_t q,uint32_t out[4]){ // emulate exactly: (nib|0x4300) bf16 minus 136
  for(int i=0;i<4;i++){uint32_t v=((q>>(4*i))&0x000f000fu)|0x43004300u; float lo=bf2f(v&0xffff)-136.f, hi=bf2f(v>>16)-136.f; out[i]=(uint32_t)f2bf(lo)|((uint32_t)f2bf(hi)<<16);}}
static float bflo(uint32_t w){return bf2f(w&0xffff);} static float bfhi(uint32_t w){return bf2f(w>>16);}
struct U4{uint32_t x,y,z,w;};
// tile_mma for one warp: acc[32][4]; arow per lane (token row pointer or null)
template<bool Q4> static void tile_mma(float acc[32][4], const U4*wt, const uint32_t*st /*uint2 as 2 words*/, const uint16_t* const arow[32], const bool has[32], int kt0,int kt_end,int step){
  for(int kt=kt0; kt<kt_end; kt+=step){
    U4 X[32][2];
    for(int l=0;l<32;l++){int c=l&3; for(int g=0;g<2;g++){ if(has[l]){const uint16_t*p=arow[l]+kt*64+32*g+8*c; U4 u; u.x=p[0]|(p[1]<<16); u.y=p[2]|(p[3]<<16); u.z=p[4]|(p[5]<<16); u.w=p[6]|((uint32_t)p[7]<<16); X[l][g]=u;} else X[l][g]={0,0,0,0};}}
    if(Q4){
      for(int g=0;g<2;g++){ float cg[32][4]={}; uint32_t A[32][4],B0[32],B1[32];
        for(int hh=0;hh<2;hh++){
          for(int l=0;l<32;l++){U4 w=wt[(size_t)kt*32+l]; uint32_t wv[4]={w.x,w.y,w.z,w.w}; dequant8(wv[2*g+hh],A[l]); B0[l]= hh? X[l][g].z : X[l][g].x; B1[l]= hh? X[l][g].w : X[l][g].y;}
          mma(cg,A,B0,B1,bf2f);}
        for(int l=0;l<32;l++){int r=l>>2; uint32_t sx=st[((size_t)kt*8+r)*2], sy=st[((size_t)kt*8+r)*2+1]; float s0=g?bfhi(sx):bflo(sx), s1=g?bfhi(sy):bflo(sy);
          acc[l][0]=fmaf(s0,cg[l][0],acc[l][0]); acc[l][1]=fmaf(s0,cg[l][1],acc[l][1]); acc[l][2]=fmaf(s1,cg[l][2],acc[l][2]); acc[l][3]=fmaf(s1,cg[l][3],acc[l][3]);}}
    } else {
      for(int j=0;j<4;j++){ uint32_t A[32][4],B0[32],B1[32];
        for(int l=0;l<32;l++){U4 w=wt[((size_t)kt*4+j)*32+l]; A[l][0]=w.x;A[l][1]=w.y;A[l][2]=w.z;A[l][3]=w.w; const U4&xg=X[l][j>>1]; B0[l]=(j&1)?xg.z:xg.x; B1[l]=(j&1)?xg.w:xg.y;}
        mma(acc,A,B0,B1,bf2f);}
    }
  }
}
int main(int argc,char**argv){
  int M=atoi(argv[1]), H=atoi(argv[2]), I=atoi(argv[3]), E=atoi(argv[4]), topk=atoi(argv[5]), group=atoi(argv[6]), SHI=atoi(argv[7]);
  std::mt19937 rng(42); std::uniform_real_distribution<float> U(-1,1);
  int MK=M*topk;
  std::vector<uint16_t> x(M*H); for(auto&v:x) v=f2bf(U(rng));
  std::vector<int> ids(MK); std::vector<float> wts(MK);
  for(int m=0;m<M;m++){ for(int j=0;j<topk;j++){ int e; bool dup; do{ e=rng()%(E+1)-1; dup=false; for(int q=0;q<j;q++) if(ids[m*topk+q]==e && e>=0) dup=true; if(m==1) e = ids[j]; }while(dup && m!=1); ids[m*topk+j]=e; wts[m*topk+j]=0.1f+0.9f*(U(rng)+1)/2;}}
  std::vector<uint8_t> w13((size_t)E*2*I*H/2), w2((size_t)E*H*I/2); for(auto&b:w13) b=rng(); for(auto&b:w2) b=rng();
  std::vector<uint16_t> s13((size_t)E*2*I*(H/group)), s2((size_t)E*H*(I/group)); for(auto&v:s13) v=f2bf(0.02f*(1.5f+U(rng))); for(auto&v:s2) v=f2bf(0.05f*(1.5f+U(rng)));
  std::vector<uint16_t> sh13((size_t)2*SHI*H), sh2((size_t)H*SHI); for(auto&v:sh13) v=f2bf(0.05f*U(rng)); for(auto&v:sh2) v=f2bf(0.1f*U(rng));
  bool has_sh=SHI>0;
  // dims as in moe_setup
  int K1p=(H+63)/64*64, KT1=K1p/64, T1=(I+7)/8, T1s=((has_sh?SHI:1)+7)/8, KT2=(I+63)/64, KT2s=((has_sh?SHI:1)+63)/64, T2=(H+15)/16, NB2=(T2+7)/8;
  int HS=64*(KT2>KT2s?KT2:KT2s); int npairs=MK+(has_sh?M:0);
  std::vector<uint32_t> pw13((size_t)E*T1*KT1*128), pw2((size_t)E*T2*KT2*128); std::vector<uint16_t> ps13((size_t)E*T1*KT1*32), ps2((size_t)E*T2*KT2*32);
  pack_q4(pw13.data(),w13.data(),E,2*I,H,T1,KT1,0,I); pack_scales(ps13.data(),s13.data(),E,2*I,H,group,T1,KT1,0,I);
  pack_q4(pw2.data(),w2.data(),E,H,I,T2,KT2,1,H); pack_scales(ps2.data(),s2.data(),E,H,I,group,T2,KT2,1,H);
  std::vector<uint16_t> psh13((size_t)T1s*KT1*1024), psh2((size_t)T2*KT2s*1024);
  if(has_sh){ pack_bf16(psh13.data(),sh13.data(),H,T1s,KT1,0,SHI); pack_bf16(psh2.data(),sh2.data(),SHI,T2,KT2s,1,H);}
  std::vector<uint16_t> xp((size_t)M*K1p,0); for(int m=0;m<M;m++) memcpy(&xp[(size_t)m*K1p],&x[(size_t)m*H],H*2);
  // route (serial equivalent of the counting sort)
  std::vector<int> cnt(E,0); for(int i=0;i<MK;i++) if(ids[i]>=0) cnt[ids[i]]++;
  std::vector<int> slot_expert, slot_off; int off=0; std::vector<int> pos(E);
  for(int e=0;e<E;e++){pos[e]=off; if(cnt[e]){slot_expert.push_back(e); slot_off.push_back(off);} off+=cnt[e];}
  int n_routed=slot_expert.size(); slot_off.push_back(off); if(has_sh){slot_expert.push_back(-1); slot_off.push_back(off+M);}
  std::vector<int> pairs(npairs); for(int i=MK-1;i>=0;i--) if(ids[i]>=0) pairs[pos[ids[i]]++]=i; // reverse order: order must not matter
  if(has_sh) for(int m=0;m<M;m++) pairs[off+m]=MK+m;
  auto pair_token=[&](int p){return p<MK? p/topk : p-MK;};
  std::vector<uint16_t> h((size_t)npairs*HS,0); std::vector<float> y((size_t)npairs*H, NAN);
  // gemm1
  int items=n_routed*T1+(has_sh?T1s:0);
  for(int it=0;it<items;it++){ bool sh=it>=n_routed*T1; int slot=sh?n_routed:it/T1; int t=sh?it-n_routed*T1:it%T1; int rows=sh?SHI:I; int beg=slot_off[slot],cnt_=slot_off[slot+1]-beg; int e=sh?0:slot_expert[slot]; size_t tile=(size_t)e*T1+t;
    for(int c0=0;c0<cnt_;c0+=8){ float red[8][32][4];
      for(int warp=0;warp<8;warp++){ const uint16_t* arow[32]; bool has[32]; float acc[32][4]={};
        for(int l=0;l<32;l++){int r=l>>2; int col=c0+r; has[l]=col<cnt_; arow[l]=&xp[(size_t)(has[l]?pair_token(pairs[beg+col]):0)*K1p];}
        if(sh) tile_mma<false>(acc,(const U4*)&psh13[(size_t)t*KT1*128*8],nullptr,arow,has,warp,KT1,8);
        else tile_mma<true>(acc,(const U4*)&pw13[tile*KT1*32*4],(const uint32_t*)&ps13[tile*KT1*8*4],arow,has,warp,KT1,8);
        memcpy(red[warp],acc,sizeof acc);}
      for(int l=0;l<32;l++){int r=l>>2,c=l&3; float s[4]={}; for(int w=0;w<8;w++) for(int q=0;q<4;q++) s[q]+=red[w][l][q];
        int j=8*t+r; float g[2]={s[0],s[1]},u[2]={s[2],s[3]};
        for(int q=0;q<2;q++){int cc=c0+2*c+q; if(cc<cnt_&&j<rows){int p=pairs[beg+cc]; float hv=g[q]/(1.0f+expf(-g[q]))*u[q]; h[(size_t)p*HS+j]=f2bf(hv);}}}
    }}
  // gemm2
  items=(n_routed+(has_sh?1:0))*NB2;
  for(int it=0;it<items;it++) for(int warp=0;warp<8;warp++){ int slot=it/NB2; int t=(it%NB2)*8+warp; if(t>=T2) continue; bool sh=slot==n_routed; int beg=slot_off[slot],cnt_=slot_off[slot+1]-beg; int e=sh?0:slot_expert[slot]; size_t tile=(size_t)e*T2+t;
    for(int c0=0;c0<cnt_;c0+=8){ const uint16_t* arow[32]; bool has[32]; float acc[32][4]={};
      for(int l=0;l<32;l++){int r=l>>2; int col=c0+r; has[l]=col<cnt_; arow[l]=&h[(size_t)(has[l]?pairs[beg+col]:0)*HS];}
      if(sh) tile_mma<false>(acc,(const U4*)&psh2[(size_t)t*KT2s*128*8],nullptr,arow,has,0,KT2s,1);
      else tile_mma<true>(acc,(const U4*)&pw2[tile*KT2*32*4],(const uint32_t*)&ps2[tile*KT2*8*4],arow,has,0,KT2,1);
      for(int l=0;l<32;l++){int r=l>>2,c=l&3; int row0=16*t+r,row1=row0+8; for(int q=0;q<2;q++){int cc=c0+2*c+q; if(cc<cnt_){float*yr=&y[(size_t)pairs[beg+cc]*H]; if(row0<H) yr[row0]=acc[l][q]; if(row1<H) yr[row1]=acc[l][2+q];}}}
    }}
  std::vector<float> out((size_t)M*H);
  for(int m=0;m<M;m++) for(int o=0;o<H;o++){ float s=0; for(int j=0;j<topk;j++){int p=m*topk+j; if(ids[p]>=0) s+=wts[p]*y[(size_t)p*H+o];} if(has_sh) s+=y[(size_t)(MK+m)*H+o]; out[(size_t)m*H+o]=s;}
  // reference (as engine/cpu/moe_w4a16.c)
  std::vector<float> ref((size_t)M*H,0); std::vector<float> hh(std::max(I,SHI));
  for(int m=0;m<M;m++){ std::vector<float> xf(H); for(int k=0;k<H;k++) xf[k]=bf2f(x[(size_t)m*H+k]);
    auto expert=[&](int e,float wgt){ int II=e<0?SHI:I; for(int r=0;r<II;r++){ double g=0,u=0; for(int k=0;k<H;k++){ if(e<0){g+=(double)bf2f(sh13[(size_t)r*H+k])*xf[k]; u+=(double)bf2f(sh13[(size_t)(II+r)*H+k])*xf[k];} else { size_t rows=(size_t)e*2*II; auto q=[&](size_t row,int k){uint8_t b=w13[row*(H/2)+k/2]; return (k&1? b>>4: b&15)-8;}; g+=(double)q(rows+r,k)*bf2f(s13[(rows+r)*(H/group)+k/group])*xf[k]; u+=(double)q(rows+II+r,k)*bf2f(s13[(rows+II+r)*(H/group)+k/group])*xf[k];}}
        hh[r]=bf2f(f2bf((float)g/(1.0f+expf(-(float)g))*(float)u));}
      for(int o=0;o<H;o++){ double d=0; for(int k=0;k<II;k++){ if(e<0) d+=(double)bf2f(sh2[(size_t)o*II+k])*hh[k]; else { size_t row=(size_t)e*H+o; uint8_t b=w2[row*(II/2)+k/2]; int q=(k&1? b>>4:b&15)-8; d+=(double)q*bf2f(s2[row*(II/group)+k/group])*hh[k];}} ref[(size_t)m*H+o]+=wgt*(float)d;}};
    for(int j=0;j<topk;j++){int e=ids[m*topk+j]; if(e>=0) expert(e,wts[m*topk+j]);} if(has_sh) expert(-1,1.f);}
  double ss=0,worst=0; for(size_t i=0;i<ref.size();i++) ss+=(double)ref[i]*ref[i]; double rms=sqrt(ss/ref.size());
  for(size_t i=0;i<ref.size();i++){ double d=fabs((double)out[i]-ref[i]); if(!(d==d)) d=INFINITY; worst=std::max(worst,d);}
  printf("M=%d H=%d I=%d E=%d topk=%d group=%d sh=%d routed_slots=%d: max err / rms = %.3g (rms %.3g)\n",M,H,I,E,topk,group,SHI,n_routed,worst/rms,rms);
  return worst/rms<1e-2?0:1;
}
