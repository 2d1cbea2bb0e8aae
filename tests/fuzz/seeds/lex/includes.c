#include <stdio.h>
#include "hello.h"
  #  include   <sys/types.h>  // trailing
#include_next <limits.h>
#import "Foo/Foo.h"
#define HDR "cfg.h"
#include HDR
#define CAT(a, b) <a##b.h>
#include CAT(std, int)
int main(void) { return 0; }
