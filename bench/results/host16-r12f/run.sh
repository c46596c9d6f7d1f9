#!/usr/bin/env bash
# host16-r12f (round 12): kernpin with the collector's threads placed on the application's threads' CPUs
# (zc_thread_spawn, commit 9ebf853: the writer started by the bound appending thread no longer shares its CPU)
# beside round 11's code (alt0 = main 0b9ca8e, build/dev-r12a's library)
mkdir -p $OUT/fn
FULLNODE_REPS=20 FULLNODE_PARTS="kernpin" FULLNODE_LIBS="build/dev-r12f/lib/alt0/libzecoll.so" \
  timeout 330 bash bench/fullnode.sh build/dev-r12f $OUT/fn > $OUT/fn/stdout.txt 2>&1
