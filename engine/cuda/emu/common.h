// common.h - host emulation of mma.sync m16n8k16 and ldmatrix (PTX ISA fragment layouts), lane by lane, for the kernel transcriptions beside it.
#include <cstdint>
#include <cstring>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <random>
static inline float bf2f(uint16_t b){uint32_t u=(uint32_t)b<<16;float f;memcpy(&f,&u,4);return f;}
static inline uint16_t f2bf(float f){uint32_t u;memcpy(&u,&f,4);u+=0x7fff+((u>>16)&1);return u>>16;}
static inline float h2f(uint16_t h){ // fp16 -> float
  int s=h>>15, e=(h>>10)&31, m=h&1023; float v;
  if(e==0) v=ldexpf((float)m,-24); else if(e==31) v=m?NAN:INFINITY; else v=ldexpf((float)(m|1024),e-25);
  return s?-v:v;}
static inline uint16_t f2h(float f){ // round to nearest even via double trick
  if(f==0) return std::signbit(f)?0x8000:0; int s=f<0; double a=fabs((double)f); int e; frexp(a,&e); // a=m*2^e, m in [0.5,1)
  int E=e-1; // a in [2^E,2^(E+1))
  if(E<-14){ // subnormal: units of 2^-24
    double q=a/ldexp(1,-24); double r=nearbyint(q); return (s<<15)|(uint16_t)r;}
  double q=a/ldexp(1,E-10); double r=nearbyint(q); // r in [1024,2048]
  if(r>=2048){r/=2;E++;}
  if(E>15) return (s<<15)|0x7c00;
  return (s<<15)|((E+15)<<10)|((int)r-1024);}
typedef float (*cvt_t)(uint16_t);
// A frag element (row,k) per lane/reg/half
struct Warp { uint32_t r[32][4]; };
static inline uint16_t half_of(uint32_t w,int h){return h? (w>>16):(w&0xffff);}
static void mma(float D[32][4], const uint32_t A[32][4], const uint32_t B0[32], const uint32_t B1[32], cvt_t cv){
  float a[16][16], b[16][8];
  for(int l=0;l<32;l++){int g=l>>2,c=l&3; for(int h=0;h<2;h++){
    a[g][2*c+h]=cv(half_of(A[l][0],h)); a[g+8][2*c+h]=cv(half_of(A[l][1],h));
    a[g][2*c+8+h]=cv(half_of(A[l][2],h)); a[g+8][2*c+8+h]=cv(half_of(A[l][3],h));
    b[2*c+h][g]=cv(half_of(B0[l],h)); b[2*c+8+h][g]=cv(half_of(B1[l],h));}}
  float d[16][8];
  for(int i=0;i<16;i++)for(int j=0;j<8;j++){double s=0;for(int k=0;k<16;k++)s+=(double)a[i][k]*b[k][j]; d[i][j]=(float)s;}
  for(int l=0;l<32;l++){int g=l>>2,c=l&3; for(int h=0;h<2;h++){ D[l][h]+=d[g][2*c+h]; D[l][2+h]+=d[g+8][2*c+h];}}
}
// ldmatrix x4: addr[lane] points at 8 contiguous 16-bit elements (a row of matrix lane/8)
static void ldsm_x4(uint32_t R[32][4], const uint16_t* const addr[32], bool trans){
  for(int i=0;i<4;i++) for(int l=0;l<32;l++){
    int g=l>>2,c=l&3; uint16_t lo,hi;
    if(!trans){ const uint16_t* row=addr[8*i+g]; lo=row[2*c]; hi=row[2*c+1]; }
    else { lo=addr[8*i+2*c][g]; hi=addr[8*i+2*c+1][g]; }
    R[l][i]=(uint32_t)lo|((uint32_t)hi<<16);
  }
}
