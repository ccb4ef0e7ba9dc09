// attn_emu.cpp - tree_attn.cu (ta_main, ta_combine) transcribed onto the warp emulator against a double reference. usage: attn_emu T ctx heads d_lat d_rope [splits]
#include "common.h"
// transcription of engine/cuda/tree_attn.cu ta_main + ta_combine with warp emulation
int main(int argc,char**argv){
  int T=atoi(argv[1]), ctx=atoi(argv[2]), H=atoi(argv[3]), d_lat=atoi(argv[4]), d_rope=atoi(argv[5]), forced_split=argc>6?atoi(argv[6]):0;
  std::mt19937 rng(7); std::uniform_real_distribution<float> U(-1,1);
  int D=d_lat+d_rope, NK=ctx+T, rows=T*H, W=(T+31)/32; float scale=1.0f/sqrtf(192.f);
  std::vector<uint16_t> q((size_t)rows*D), kv((size_t)NK*D); for(auto&v:q) v=f2bf(U(rng)); for(auto&v:kv) v=f2bf(U(rng));
  std::vector<int> parent(T); std::vector<uint32_t> mask((size_t)T*W,0);
  for(int i=0;i<T;i++){ parent[i]= i? rng()%i : -1; if(i) for(int w=0;w<W;w++) mask[i*W+w]=mask[parent[i]*W+w]; mask[i*W+i/32]|=1u<<(i%32);}
  // setup
  int DV=(d_lat+63)/64*64, DQ=DV+(d_rope+15)/16*16; int nrg=(rows+31)/32, rows_pad=nrg*32;
  int sms=132; int nsplit=(sms+nrg-1)/nrg; int max_split=(NK+127)/128; if(nsplit>max_split) nsplit=max_split; if(nsplit<1) nsplit=1; if(forced_split) nsplit=forced_split;
  int kps=((NK+nsplit-1)/nsplit+31)/32*32; nsplit=(NK+kps-1)/kps;
  auto expo=[&](std::vector<uint16_t>&x){uint16_t mx=0; for(auto v:x){uint16_t m=v&0x7fff; if(m<0x7f80&&m>mx) mx=m;} return mx? ilogbf(bf2f(mx))-7:0;};
  int eq=expo(q), ek=expo(kv); float qk_mul=(float)((double)scale*1.4426950408889634*ldexp(1.0,eq+ek)), v_mul=(float)ldexp(1.0,ek);
  auto convert=[&](std::vector<uint16_t>&src,int nrows,int nrows_pad,float mul){ std::vector<uint16_t> dst((size_t)nrows_pad*DQ);
    for(long long i=0;i<(long long)nrows_pad*DQ;i++){int r=i/DQ,col=i%DQ; int sc=-1; if(r<nrows){ if(col<DV) sc=col<d_lat?col:-1; else sc=col-DV<d_rope? d_lat+(col-DV):-1;} float v=sc>=0? bf2f(src[(size_t)r*D+sc])*mul:0.f; dst[i]=f2h(v);} return dst;};
  auto qh=convert(q,rows,rows_pad,(float)ldexp(1.0,-eq)); auto kvh=convert(kv,NK,NK,(float)ldexp(1.0,-ek));
  std::vector<float> opart((size_t)nsplit*rows_pad*DV); std::vector<float> mlm((size_t)nsplit*rows_pad), mll((size_t)nsplit*rows_pad); std::vector<float> out((size_t)rows*d_lat, NAN);
  const int KC=32, ldk=DQ+8, SPLD=36, PLD=40;
  auto visible=[&](int grow,int kk){ if(grow>=rows||kk>=NK) return false; if(kk<ctx) return true; int t=grow/H,j=kk-ctx; return (bool)((mask[(size_t)t*W+j/32]>>(j%32))&1u);};
  for(int rg=0;rg<nrg;rg++) for(int split=0;split<nsplit;split++){
    int row0=rg*32, k_lo=split*kps, k_hi=std::min(NK,k_lo+kps); int nchunks=k_hi>k_lo?(k_hi-k_lo+KC-1)/KC:0; int KS=DQ/16, KQ=(KS+3)/4, NT=DV/32;
    std::vector<uint16_t> st((size_t)KC*ldk); std::vector<float> sp(4*32*SPLD); std::vector<uint16_t> ps(32*PLD); float alpha_s[32]; float mrun[256], lrun[256];
    for(int i=0;i<256;i++){mrun[i]=-INFINITY; lrun[i]=0;}
    // per warp state
    static uint32_t qa[8][9][32][4]; static float o[8][16][32][4];
    for(int warp=0;warp<8;warp++){int rt=warp&1,quarter=warp>>1; for(int i=0;i<9;i++) for(int l=0;l<32;l++){int g=l>>2,c=l&3; int ks=quarter*KQ+i; if(i<KQ&&ks<KS){ const uint16_t*qr=&qh[(size_t)(row0+rt*16+g)*DQ+ks*16+2*c]; auto w32=[&](const uint16_t*p){return (uint32_t)p[0]|((uint32_t)p[1]<<16);}; qa[warp][i][l][0]=w32(qr); qa[warp][i][l][1]=w32(qr+8*(size_t)DQ); qa[warp][i][l][2]=w32(qr+8); qa[warp][i][l][3]=w32(qr+8*(size_t)DQ+8);} else qa[warp][i][l][0]=qa[warp][i][l][1]=qa[warp][i][l][2]=qa[warp][i][l][3]=0;}
      for(int nt=0;nt<16;nt++) for(int l=0;l<32;l++) for(int z=0;z<4;z++) o[warp][nt][l][z]=0;}
    for(int ch=0;ch<nchunks;ch++){
      int kbase=k_lo+ch*KC;
      for(int r=0;r<KC;r++) for(int piece=0;piece<DQ/8;piece++){int kk=kbase+r; bool ok=kk<k_hi; for(int e=0;e<8;e++) st[(size_t)r*ldk+piece*8+e]= ok? kvh[(size_t)kk*DQ+piece*8+e]:0;}
      for(int warp=0;warp<8;warp++){int rt=warp&1,quarter=warp>>1; float s[4][32][4]={};
        for(int i=0;i<9;i++){int ks=quarter*KQ+i; if(i<KQ&&ks<KS){ for(int np=0;np<2;np++){ const uint16_t* addr[32]; for(int l=0;l<32;l++){int key=np*16+(l&7)+(l>>4)*8; int col=ks*16+((l>>3)&1)*8; addr[l]=&st[(size_t)key*ldk+col];} uint32_t b[32][4]; ldsm_x4(b,addr,false);
              uint32_t B0[32],B1[32]; for(int l=0;l<32;l++){B0[l]=b[l][0];B1[l]=b[l][1];} mma(s[2*np],qa[warp][i],B0,B1,h2f); for(int l=0;l<32;l++){B0[l]=b[l][2];B1[l]=b[l][3];} mma(s[2*np+1],qa[warp][i],B0,B1,h2f);}}}
        float*spq=&sp[(size_t)quarter*32*SPLD]; for(int nt=0;nt<4;nt++) for(int l=0;l<32;l++){int g=l>>2,c=l&3; int r=rt*16+g,col=nt*8+2*c; spq[r*SPLD+col]=s[nt][l][0]; spq[r*SPLD+col+1]=s[nt][l][1]; spq[(r+8)*SPLD+col]=s[nt][l][2]; spq[(r+8)*SPLD+col+1]=s[nt][l][3];}}
      // softmax: 256 threads, groups of 8 per row
      for(int srow=0;srow<32;srow++){ float v[8][4], cmax[8]; int sgrow=row0+srow;
        for(int ssub=0;ssub<8;ssub++){cmax[ssub]=-INFINITY; for(int j=0;j<4;j++){int col=ssub*4+j; float sum=0; for(int qq=0;qq<4;qq++) sum+=sp[((size_t)qq*32+srow)*SPLD+col]; v[ssub][j]=visible(sgrow,kbase+col)? sum*qk_mul : -INFINITY; cmax[ssub]=fmaxf(cmax[ssub],v[ssub][j]);}}
        float cm=-INFINITY; for(int z=0;z<8;z++) cm=fmaxf(cm,cmax[z]);
        int tid0=srow*8; float m_run=mrun[tid0], l_run=lrun[tid0]; float m_new=fmaxf(m_run,cm); float alpha=1.f, psum=0; float p[8][4];
        for(int ssub=0;ssub<8;ssub++) for(int j=0;j<4;j++){p[ssub][j]=(m_new==-INFINITY||v[ssub][j]==-INFINITY)?0.f:exp2f(v[ssub][j]-m_new); psum+=p[ssub][j];}
        if(m_new!=-INFINITY) alpha= m_run==-INFINITY?0.f:exp2f(m_run-m_new);
        l_run=l_run*alpha+psum; m_run=m_new; for(int z=0;z<8;z++){mrun[tid0+z]=m_run; lrun[tid0+z]=l_run;}
        for(int ssub=0;ssub<8;ssub++) for(int j=0;j<4;j++) ps[srow*PLD+ssub*4+j]=f2h(p[ssub][j]); alpha_s[srow]=alpha;}
      // PV
      for(int warp=0;warp<8;warp++){int rt=warp&1,quarter=warp>>1; int dv0=quarter*(DV/4);
        for(int l=0;l<32;l++){int g=l>>2; float alo=alpha_s[rt*16+g], ahi=alpha_s[rt*16+g+8]; for(int nt=0;nt<16;nt++){o[warp][nt][l][0]*=alo;o[warp][nt][l][1]*=alo;o[warp][nt][l][2]*=ahi;o[warp][nt][l][3]*=ahi;}}
        for(int kstep=0;kstep<KC/16;kstep++){ const uint16_t* addr[32]; for(int l=0;l<32;l++) addr[l]=&ps[(size_t)(rt*16+(l&7)+((l>>3)&1)*8)*PLD+kstep*16+(l>>4)*8]; uint32_t pa[32][4]; ldsm_x4(pa,addr,false);
          for(int ntp=0;ntp<8;ntp++){ if(2*ntp<NT){ for(int l=0;l<32;l++){int key=kstep*16+(l&7)+((l>>3)&1)*8; addr[l]=&st[(size_t)key*ldk+dv0+ntp*16+(l>>4)*8];} uint32_t b[32][4]; ldsm_x4(b,addr,true);
              uint32_t B0[32],B1[32]; for(int l=0;l<32;l++){B0[l]=b[l][0];B1[l]=b[l][1];} mma(o[warp][2*ntp],pa,B0,B1,h2f); for(int l=0;l<32;l++){B0[l]=b[l][2];B1[l]=b[l][3];} mma(o[warp][2*ntp+1],pa,B0,B1,h2f);}}}}
    }
    // epilogue
    for(int warp=0;warp<8;warp++){int rt=warp&1,quarter=warp>>1; int dv0=quarter*(DV/4); int NT=DV/32;
      for(int l=0;l<32;l++){int g=l>>2,c=l&3; int rlo=rt*16+g, rhi=rlo+8; float llo=lrun[rlo*8], lhi=lrun[rhi*8]; int r_lo=row0+rlo, r_hi=row0+rhi;
        if(nsplit==1){ float flo=llo>0? v_mul/llo:0, fhi=lhi>0? v_mul/lhi:0; for(int nt=0;nt<16;nt++){int dim=dv0+nt*8+2*c; if(nt<NT&&dim<d_lat){ if(r_lo<rows){out[(size_t)r_lo*d_lat+dim]=o[warp][nt][l][0]*flo; out[(size_t)r_lo*d_lat+dim+1]=o[warp][nt][l][1]*flo;} if(r_hi<rows){out[(size_t)r_hi*d_lat+dim]=o[warp][nt][l][2]*fhi; out[(size_t)r_hi*d_lat+dim+1]=o[warp][nt][l][3]*fhi;}}}}
        else { for(int nt=0;nt<16;nt++){int dim=dv0+nt*8+2*c; if(nt<NT){ float*op=&opart[(size_t)split*rows_pad*DV]; op[(size_t)r_lo*DV+dim]=o[warp][nt][l][0]; op[(size_t)r_lo*DV+dim+1]=o[warp][nt][l][1]; op[(size_t)r_hi*DV+dim]=o[warp][nt][l][2]; op[(size_t)r_hi*DV+dim+1]=o[warp][nt][l][3];}}}}}
    if(nsplit>1) for(int srow=0;srow<32;srow++){ mlm[(size_t)split*rows_pad+row0+srow]=mrun[srow*8]; mll[(size_t)split*rows_pad+row0+srow]=lrun[srow*8];}
  }
  if(nsplit>1) for(long long i=0;i<(long long)rows*d_lat;i++){int row=i/d_lat,dim=i%d_lat; float Mx=-INFINITY; for(int s=0;s<nsplit;s++) Mx=fmaxf(Mx,mlm[(size_t)s*rows_pad+row]); float num=0,den=0; if(Mx!=-INFINITY) for(int s=0;s<nsplit;s++){float m=mlm[(size_t)s*rows_pad+row]; if(m==-INFINITY) continue; float w=exp2f(m-Mx); den+=w*mll[(size_t)s*rows_pad+row]; num+=w*opart[((size_t)s*rows_pad+row)*DV+dim];} out[i]= den>0? num/den*v_mul:0;}
  // reference
  std::vector<float> ref((size_t)rows*d_lat);
  for(int t=0;t<T;t++) for(int h=0;h<H;h++){ const uint16_t*qq=&q[((size_t)t*H+h)*D]; std::vector<double> s(NK,-INFINITY); double mx=-INFINITY,sum=0;
    for(int j=0;j<NK;j++){ bool vis= j<ctx || ((mask[(size_t)t*W+(j-ctx)/32]>>((j-ctx)%32))&1); if(!vis) continue; double acc=0; for(int k=0;k<D;k++) acc+=(double)bf2f(qq[k])*bf2f(kv[(size_t)j*D+k]); s[j]=acc*scale; mx=std::max(mx,s[j]);}
    std::vector<double> o2(d_lat,0); for(int j=0;j<NK;j++){ if(s[j]==-INFINITY) continue; double p=exp(s[j]-mx); sum+=p; for(int k=0;k<d_lat;k++) o2[k]+=p*bf2f(kv[(size_t)j*D+k]);}
    for(int k=0;k<d_lat;k++) ref[((size_t)t*H+h)*d_lat+k]=(float)(o2[k]/sum);}
  double ss=0,worst=0; for(auto v:ref) ss+=(double)v*v; double rms=sqrt(ss/ref.size()); for(size_t i=0;i<ref.size();i++){double d=fabs((double)out[i]-ref[i]); if(!(d==d)) d=INFINITY; worst=std::max(worst,d);}
  printf("T=%d ctx=%d H=%d lat=%d rope=%d splits=%d: max err / rms = %.3g\n",T,ctx,H,d_lat,d_rope,nsplit,worst/rms);
  return worst/rms<1e-2?0:1;
}
