;; Dense kernels of the NLU parse path (WebAssembly with 128-bit SIMD).
;; Source of kernels-wasm.ts: regenerate with `node scripts/build-wasm-kernels.js` after editing;
;; src/core/nlu/wasm/kernels.spec.ts checks that the embedded bytes match this file.
;; The memory is the caller's (one per model); addresses are byte offsets into it.
(module
  (memory (import "env" "memory") 1)

  ;; out[0..stride) = sum over i < n of vals[i] * w[cols[i] * stride .. + stride)
  ;; w: f32 rows of `stride` values (stride a multiple of 4, rows padded with zeros);
  ;; cols: i32, vals: f32, out: f32. Accumulates in f32, 16 columns of the output at a time
  ;; (4 vector registers), then 4 at a time for the rest.
  (func (export "gatherRows")
    (param $w i32) (param $stride i32) (param $cols i32) (param $vals i32) (param $n i32)
    (param $out i32)
    (local $j i32) (local $i i32) (local $row i32) (local $v v128) (local $bytes i32)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128)
    (local.set $bytes (i32.shl (local.get $stride) (i32.const 2)))
    ;; 16 outputs per pass over the columns
    (block $done16
      (loop $chunk16
        (br_if $done16 (i32.gt_u (i32.add (local.get $j) (i32.const 16)) (local.get $stride)))
        (local.set $a0 (v128.const i64x2 0 0))
        (local.set $a1 (v128.const i64x2 0 0))
        (local.set $a2 (v128.const i64x2 0 0))
        (local.set $a3 (v128.const i64x2 0 0))
        (local.set $i (i32.const 0))
        (block $cols16
          (loop $col16
            (br_if $cols16 (i32.ge_u (local.get $i) (local.get $n)))
            (local.set $row
              (i32.add
                (i32.add (local.get $w)
                  (i32.mul
                    (i32.load (i32.add (local.get $cols) (i32.shl (local.get $i) (i32.const 2))))
                    (local.get $bytes)))
                (i32.shl (local.get $j) (i32.const 2))))
            (local.set $v
              (f32x4.splat
                (f32.load (i32.add (local.get $vals) (i32.shl (local.get $i) (i32.const 2))))))
            (local.set $a0 (f32x4.add (local.get $a0)
              (f32x4.mul (local.get $v) (v128.load offset=0 (local.get $row)))))
            (local.set $a1 (f32x4.add (local.get $a1)
              (f32x4.mul (local.get $v) (v128.load offset=16 (local.get $row)))))
            (local.set $a2 (f32x4.add (local.get $a2)
              (f32x4.mul (local.get $v) (v128.load offset=32 (local.get $row)))))
            (local.set $a3 (f32x4.add (local.get $a3)
              (f32x4.mul (local.get $v) (v128.load offset=48 (local.get $row)))))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $col16)))
        (local.set $row (i32.add (local.get $out) (i32.shl (local.get $j) (i32.const 2))))
        (v128.store offset=0 (local.get $row) (local.get $a0))
        (v128.store offset=16 (local.get $row) (local.get $a1))
        (v128.store offset=32 (local.get $row) (local.get $a2))
        (v128.store offset=48 (local.get $row) (local.get $a3))
        (local.set $j (i32.add (local.get $j) (i32.const 16)))
        (br $chunk16)))
    ;; the remaining outputs, 4 per pass
    (block $done4
      (loop $chunk4
        (br_if $done4 (i32.ge_u (local.get $j) (local.get $stride)))
        (local.set $a0 (v128.const i64x2 0 0))
        (local.set $i (i32.const 0))
        (block $cols4
          (loop $col4
            (br_if $cols4 (i32.ge_u (local.get $i) (local.get $n)))
            (local.set $row
              (i32.add
                (i32.add (local.get $w)
                  (i32.mul
                    (i32.load (i32.add (local.get $cols) (i32.shl (local.get $i) (i32.const 2))))
                    (local.get $bytes)))
                (i32.shl (local.get $j) (i32.const 2))))
            (local.set $a0 (f32x4.add (local.get $a0)
              (f32x4.mul
                (f32x4.splat
                  (f32.load (i32.add (local.get $vals) (i32.shl (local.get $i) (i32.const 2)))))
                (v128.load (local.get $row)))))
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br $col4)))
        (v128.store (i32.add (local.get $out) (i32.shl (local.get $j) (i32.const 2))) (local.get $a0))
        (local.set $j (i32.add (local.get $j) (i32.const 4)))
        (br $chunk4))))
)
