/*
 * Stand-in for Windows' bcryptprimitives.dll, which Wine 8 lacks. Go >= 1.22 binaries load it at start for
 * ProcessPrng (their source of random bytes) and die without it. Used only by `make test-windows` under Wine;
 * never shipped. ProcessPrng fills the buffer from RtlGenRandom (advapi32's SystemFunction036), which Wine has.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
  while (length > 0) {
    ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
    if (!SystemFunction036(data, chunk)) return FALSE;
    data += chunk;
    length -= chunk;
  }
  return TRUE;
}
