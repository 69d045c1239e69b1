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

  ;; ---- Linear-chain CRF decoding (src/core/nlu/crf.ts), over tag groups --------------------
  ;; A group (32-byte header at $groups + 32·g) is a set of tags that share one list of
  ;; neighbours: i32 S (neighbours), M (tags), P = ceil(M/2), src (S i32: the neighbours),
  ;; tgt (M i32: the tags), score, exp. score/exp hold the transition weights of the group's tag
  ;; 2p+lane and neighbour n at f64 index (p·S + n)·2 + lane (padding lanes: -inf / 0), so that
  ;; two tags are computed per f64x2 over the neighbours in order: the arithmetic per tag is the
  ;; JS loop's, in the same order (results are bit-identical).
  ;; Rows are K f64 (K tags) per position; $gath is scratch of K f64.

  ;; Viterbi recursion for t in [1, T): score[t][k] = max_n (score[t-1][src n] + w) + e[t][k],
  ;; back[t][k] = the first maximising neighbour (i32 rows).
  (func (export "viterbi")
    (param $T i32) (param $K i32) (param $e i32) (param $score i32) (param $back i32)
    (param $gath i32) (param $groups i32) (param $ng i32)
    (local $t i32) (local $g i32) (local $hdr i32) (local $S i32) (local $M i32) (local $P i32)
    (local $src i32) (local $tgt i32) (local $w i32) (local $n i32) (local $p i32)
    (local $prev i32) (local $cur i32) (local $bcur i32) (local $m i32) (local $k i32)
    (local $best v128) (local $arg v128) (local $cand v128) (local $mask v128) (local $row i32)
    (local.set $t (i32.const 1))
    (block $tdone (loop $tloop
      (br_if $tdone (i32.ge_s (local.get $t) (local.get $T)))
      (local.set $prev (i32.add (local.get $score)
        (i32.shl (i32.mul (i32.sub (local.get $t) (i32.const 1)) (local.get $K)) (i32.const 3))))
      (local.set $cur (i32.add (local.get $prev) (i32.shl (local.get $K) (i32.const 3))))
      (local.set $bcur (i32.add (local.get $back)
        (i32.shl (i32.mul (local.get $t) (local.get $K)) (i32.const 2))))
      (local.set $row (i32.add (local.get $e)
        (i32.shl (i32.mul (local.get $t) (local.get $K)) (i32.const 3))))
      (local.set $g (i32.const 0))
      (block $gdone (loop $gloop
        (br_if $gdone (i32.ge_s (local.get $g) (local.get $ng)))
        (local.set $hdr (i32.add (local.get $groups) (i32.shl (local.get $g) (i32.const 5))))
        (local.set $S (i32.load offset=0 (local.get $hdr)))
        (local.set $M (i32.load offset=4 (local.get $hdr)))
        (local.set $P (i32.load offset=8 (local.get $hdr)))
        (local.set $src (i32.load offset=12 (local.get $hdr)))
        (local.set $tgt (i32.load offset=16 (local.get $hdr)))
        (local.set $w (i32.load offset=20 (local.get $hdr)))
        ;; gathered[n] = score[t-1][src n]
        (local.set $n (i32.const 0))
        (block $ndone (loop $nloop
          (br_if $ndone (i32.ge_s (local.get $n) (local.get $S)))
          (f64.store (i32.add (local.get $gath) (i32.shl (local.get $n) (i32.const 3)))
            (f64.load (i32.add (local.get $prev)
              (i32.shl (i32.load (i32.add (local.get $src) (i32.shl (local.get $n) (i32.const 2))))
                (i32.const 3)))))
          (local.set $n (i32.add (local.get $n) (i32.const 1)))
          (br $nloop)))
        (local.set $p (i32.const 0))
        (block $pdone (loop $ploop
          (br_if $pdone (i32.ge_s (local.get $p) (local.get $P)))
          (local.set $best (f64x2.splat (f64.const -inf)))
          (local.set $arg (v128.const i64x2 0 0))
          (local.set $n (i32.const 0))
          (block $sdone (loop $sloop
            (br_if $sdone (i32.ge_s (local.get $n) (local.get $S)))
            (local.set $cand (f64x2.add
              (v128.load64_splat (i32.add (local.get $gath) (i32.shl (local.get $n) (i32.const 3))))
              (v128.load (i32.add (local.get $w)
                (i32.shl (i32.add (i32.mul (local.get $p) (local.get $S)) (local.get $n))
                  (i32.const 4))))))
            (local.set $mask (f64x2.gt (local.get $cand) (local.get $best)))
            (local.set $best (v128.bitselect (local.get $cand) (local.get $best) (local.get $mask)))
            (local.set $arg (v128.bitselect (i64x2.splat (i64.extend_i32_u (local.get $n)))
              (local.get $arg) (local.get $mask)))
            (local.set $n (i32.add (local.get $n) (i32.const 1)))
            (br $sloop)))
          ;; lane 0: tag 2p
          (local.set $m (i32.shl (local.get $p) (i32.const 1)))
          (local.set $k (i32.load (i32.add (local.get $tgt) (i32.shl (local.get $m) (i32.const 2)))))
          (f64.store (i32.add (local.get $cur) (i32.shl (local.get $k) (i32.const 3)))
            (f64.add (f64x2.extract_lane 0 (local.get $best))
              (f64.load (i32.add (local.get $row) (i32.shl (local.get $k) (i32.const 3))))))
          (i32.store (i32.add (local.get $bcur) (i32.shl (local.get $k) (i32.const 2)))
            (i32.load (i32.add (local.get $src)
              (i32.shl (i32.wrap_i64 (i64x2.extract_lane 0 (local.get $arg))) (i32.const 2)))))
          ;; lane 1: tag 2p+1, if any
          (local.set $m (i32.add (local.get $m) (i32.const 1)))
          (if (i32.lt_s (local.get $m) (local.get $M))
            (then
              (local.set $k
                (i32.load (i32.add (local.get $tgt) (i32.shl (local.get $m) (i32.const 2)))))
              (f64.store (i32.add (local.get $cur) (i32.shl (local.get $k) (i32.const 3)))
                (f64.add (f64x2.extract_lane 1 (local.get $best))
                  (f64.load (i32.add (local.get $row) (i32.shl (local.get $k) (i32.const 3))))))
              (i32.store (i32.add (local.get $bcur) (i32.shl (local.get $k) (i32.const 2)))
                (i32.load (i32.add (local.get $src)
                  (i32.shl (i32.wrap_i64 (i64x2.extract_lane 1 (local.get $arg)))
                    (i32.const 2)))))))
          (local.set $p (i32.add (local.get $p) (i32.const 1)))
          (br $ploop)))
        (local.set $g (i32.add (local.get $g) (i32.const 1)))
        (br $gloop)))
      (local.set $t (i32.add (local.get $t) (i32.const 1)))
      (br $tloop)))
  )

  ;; One scaled sum-product step over the groups: out[k] = Σ_n exp(w) · gathered[n], times
  ;; psi[k] when $mul is not 0 (forward; backward passes $mul = 0 and gathers psi·beta itself);
  ;; returns Σ_k out[k]. $in is the row the neighbours are gathered from, $inMul (if not 0) a
  ;; row multiplied into the gathered values (backward: psi[t+1]).
  (func $sumStep
    (param $K i32) (param $in i32) (param $inMul i32) (param $out i32) (param $mul i32)
    (param $gath i32) (param $groups i32) (param $ng i32) (result f64)
    (local $g i32) (local $hdr i32) (local $S i32) (local $M i32) (local $P i32)
    (local $src i32) (local $tgt i32) (local $w i32) (local $n i32) (local $p i32)
    (local $m i32) (local $k i32) (local $j i32) (local $acc v128) (local $v f64) (local $sum f64)
    (local.set $g (i32.const 0))
    (block $gdone (loop $gloop
      (br_if $gdone (i32.ge_s (local.get $g) (local.get $ng)))
      (local.set $hdr (i32.add (local.get $groups) (i32.shl (local.get $g) (i32.const 5))))
      (local.set $S (i32.load offset=0 (local.get $hdr)))
      (local.set $M (i32.load offset=4 (local.get $hdr)))
      (local.set $P (i32.load offset=8 (local.get $hdr)))
      (local.set $src (i32.load offset=12 (local.get $hdr)))
      (local.set $tgt (i32.load offset=16 (local.get $hdr)))
      (local.set $w (i32.load offset=24 (local.get $hdr)))
      (local.set $n (i32.const 0))
      (block $ndone (loop $nloop
        (br_if $ndone (i32.ge_s (local.get $n) (local.get $S)))
        (local.set $j (i32.shl
          (i32.load (i32.add (local.get $src) (i32.shl (local.get $n) (i32.const 2))))
          (i32.const 3)))
        (local.set $v (f64.load (i32.add (local.get $in) (local.get $j))))
        (if (local.get $inMul)
          (then (local.set $v (f64.mul
            (f64.load (i32.add (local.get $inMul) (local.get $j))) (local.get $v)))))
        (f64.store (i32.add (local.get $gath) (i32.shl (local.get $n) (i32.const 3))) (local.get $v))
        (local.set $n (i32.add (local.get $n) (i32.const 1)))
        (br $nloop)))
      (local.set $p (i32.const 0))
      (block $pdone (loop $ploop
        (br_if $pdone (i32.ge_s (local.get $p) (local.get $P)))
        (local.set $acc (f64x2.splat (f64.const 0)))
        (local.set $n (i32.const 0))
        (block $sdone (loop $sloop
          (br_if $sdone (i32.ge_s (local.get $n) (local.get $S)))
          (local.set $acc (f64x2.add (local.get $acc)
            (f64x2.mul
              (v128.load64_splat (i32.add (local.get $gath) (i32.shl (local.get $n) (i32.const 3))))
              (v128.load (i32.add (local.get $w)
                (i32.shl (i32.add (i32.mul (local.get $p) (local.get $S)) (local.get $n))
                  (i32.const 4)))))))
          (local.set $n (i32.add (local.get $n) (i32.const 1)))
          (br $sloop)))
        (local.set $m (i32.shl (local.get $p) (i32.const 1)))
        (local.set $k (i32.shl
          (i32.load (i32.add (local.get $tgt) (i32.shl (local.get $m) (i32.const 2))))
          (i32.const 3)))
        (local.set $v (f64x2.extract_lane 0 (local.get $acc)))
        (if (local.get $mul)
          (then (local.set $v (f64.mul (local.get $v)
            (f64.load (i32.add (local.get $mul) (local.get $k)))))))
        (f64.store (i32.add (local.get $out) (local.get $k)) (local.get $v))
        (local.set $sum (f64.add (local.get $sum) (local.get $v)))
        (local.set $m (i32.add (local.get $m) (i32.const 1)))
        (if (i32.lt_s (local.get $m) (local.get $M))
          (then
            (local.set $k (i32.shl
              (i32.load (i32.add (local.get $tgt) (i32.shl (local.get $m) (i32.const 2))))
              (i32.const 3)))
            (local.set $v (f64x2.extract_lane 1 (local.get $acc)))
            (if (local.get $mul)
              (then (local.set $v (f64.mul (local.get $v)
                (f64.load (i32.add (local.get $mul) (local.get $k)))))))
            (f64.store (i32.add (local.get $out) (local.get $k)) (local.get $v))
            (local.set $sum (f64.add (local.get $sum) (local.get $v)))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $ploop)))
      (local.set $g (i32.add (local.get $g) (i32.const 1)))
      (br $gloop)))
    (local.get $sum)
  )

  ;; Divides a row of K values by $sum (left alone unless $sum > 0), as crf.ts scaleRow.
  (func $scaleRow (param $row i32) (param $K i32) (param $sum f64)
    (local $inv f64) (local $k i32) (local $a i32)
    (if (i32.eqz (f64.gt (local.get $sum) (f64.const 0))) (then (return)))
    (local.set $inv (f64.div (f64.const 1) (local.get $sum)))
    (block $done (loop $loop
      (br_if $done (i32.ge_s (local.get $k) (local.get $K)))
      (local.set $a (i32.add (local.get $row) (i32.shl (local.get $k) (i32.const 3))))
      (f64.store (local.get $a) (f64.mul (f64.load (local.get $a)) (local.get $inv)))
      (local.set $k (i32.add (local.get $k) (i32.const 1)))
      (br $loop)))
  )

  ;; Scaled forward pass for t in [1, last]: alpha[t] = (Σ over groups) · psi[t], normalised.
  ;; Row 0 is set (and normalised) by the caller.
  (func (export "forward")
    (param $last i32) (param $K i32) (param $psi i32) (param $alpha i32) (param $gath i32)
    (param $groups i32) (param $ng i32)
    (local $t i32) (local $rowBytes i32) (local $cur i32)
    (local.set $rowBytes (i32.shl (local.get $K) (i32.const 3)))
    (local.set $t (i32.const 1))
    (block $done (loop $loop
      (br_if $done (i32.gt_s (local.get $t) (local.get $last)))
      (local.set $cur (i32.mul (local.get $t) (local.get $rowBytes)))
      (call $scaleRow
        (i32.add (local.get $alpha) (local.get $cur))
        (local.get $K)
        (call $sumStep (local.get $K)
          (i32.sub (i32.add (local.get $alpha) (local.get $cur)) (local.get $rowBytes))
          (i32.const 0)
          (i32.add (local.get $alpha) (local.get $cur))
          (i32.add (local.get $psi) (local.get $cur))
          (local.get $gath) (local.get $groups) (local.get $ng)))
      (local.set $t (i32.add (local.get $t) (i32.const 1)))
      (br $loop)))
  )

  ;; Scaled backward pass for t from T-2 down to first: beta[t][j] = Σ_n exp(w) ·
  ;; psi[t+1][n] · beta[t+1][n], normalised. Row T-1 is set by the caller.
  (func (export "backward")
    (param $T i32) (param $first i32) (param $K i32) (param $psi i32) (param $beta i32)
    (param $gath i32) (param $groups i32) (param $ng i32)
    (local $t i32) (local $rowBytes i32) (local $cur i32) (local $next i32)
    (local.set $rowBytes (i32.shl (local.get $K) (i32.const 3)))
    (local.set $t (i32.sub (local.get $T) (i32.const 2)))
    (block $done (loop $loop
      (br_if $done (i32.lt_s (local.get $t) (local.get $first)))
      (local.set $cur (i32.mul (local.get $t) (local.get $rowBytes)))
      (local.set $next (i32.add (local.get $cur) (local.get $rowBytes)))
      (call $scaleRow
        (i32.add (local.get $beta) (local.get $cur))
        (local.get $K)
        (call $sumStep (local.get $K)
          (i32.add (local.get $beta) (local.get $next))
          (i32.add (local.get $psi) (local.get $next))
          (i32.add (local.get $beta) (local.get $cur))
          (i32.const 0)
          (local.get $gath) (local.get $groups) (local.get $ng)))
      (local.set $t (i32.sub (local.get $t) (i32.const 1)))
      (br $loop)))
  )
)
