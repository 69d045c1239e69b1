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
  (func $gatherRows (export "gatherRows")
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

;; A one-hidden-layer network on a sparse input: pre = gatherRows(w1, cols, vals), then the
  ;; units with relu(pre + b1) > 0 as a second sparse input (cols2/vals2, f32) of w2 (H rows of
  ;; stride2 f32): out = Σ_j relu_j · w2[j] (without the output bias).
  (func (export "mlp")
    (param $w1 i32) (param $stride1 i32) (param $cols i32) (param $vals i32) (param $n i32)
    (param $pre i32) (param $b1 i32) (param $H i32)
    (param $w2 i32) (param $stride2 i32) (param $cols2 i32) (param $vals2 i32) (param $out i32)
    (local $j i32) (local $n2 i32) (local $v f32)
    (call $gatherRows (local.get $w1) (local.get $stride1) (local.get $cols) (local.get $vals)
      (local.get $n) (local.get $pre))
    (block $done (loop $loop
      (br_if $done (i32.ge_s (local.get $j) (local.get $H)))
      (local.set $v (f32.add
        (f32.load (i32.add (local.get $pre) (i32.shl (local.get $j) (i32.const 2))))
        (f32.load (i32.add (local.get $b1) (i32.shl (local.get $j) (i32.const 2))))))
      (if (f32.gt (local.get $v) (f32.const 0))
        (then
          (i32.store (i32.add (local.get $cols2) (i32.shl (local.get $n2) (i32.const 2)))
            (local.get $j))
          (f32.store (i32.add (local.get $vals2) (i32.shl (local.get $n2) (i32.const 2)))
            (local.get $v))
          (local.set $n2 (i32.add (local.get $n2) (i32.const 1)))))
      (local.set $j (i32.add (local.get $j) (i32.const 1)))
      (br $loop)))
    (call $gatherRows (local.get $w2) (local.get $stride2) (local.get $cols2) (local.get $vals2)
      (local.get $n2) (local.get $out))
  )

;; The sentence input of a classifier from token rows (see DIETClassifier.predictWithProduct):
  ;; per block (24-byte header at $blocks + 24·b: i32 first row, i32 end row, i32 column offset,
  ;; pad, f64 scale) the rows' values are summed per column (|v|, zeros skipped) in $acc (f64,
  ;; all 0 between calls), and each column becomes cols[n] = offset + column (if < $inputDim),
  ;; vals[n] = f32(sqrt(sum) · scale / sqrt(total)), in first-occurrence order. A row is an
  ;; (address, length) pair in $rows; at the address: length f64 values, then length i32 columns.
  ;; Returns n.
  (func (export "assemble")
    (param $blocks i32) (param $nb i32) (param $rows i32) (param $acc i32) (param $touched i32)
    (param $cols i32) (param $vals i32) (param $inputDim i32) (result i32)
    (local $b i32) (local $hdr i32) (local $r i32) (local $end i32) (local $ptr i32)
    (local $len i32) (local $k i32) (local $i i32) (local $m i32) (local $n i32) (local $a i32)
    (local $c f64) (local $total f64) (local $f f64) (local $v f64) (local $col i32)
    (block $bdone (loop $bloop
      (br_if $bdone (i32.ge_s (local.get $b) (local.get $nb)))
      (local.set $hdr (i32.add (local.get $blocks) (i32.mul (local.get $b) (i32.const 24))))
      (local.set $r (i32.load offset=0 (local.get $hdr)))
      (local.set $end (i32.load offset=4 (local.get $hdr)))
      (local.set $total (f64.const 0))
      (local.set $m (i32.const 0))
      (block $rdone (loop $rloop
        (br_if $rdone (i32.ge_s (local.get $r) (local.get $end)))
        (local.set $ptr (i32.load (i32.add (local.get $rows) (i32.shl (local.get $r) (i32.const 3)))))
        (local.set $len (i32.load offset=4
          (i32.add (local.get $rows) (i32.shl (local.get $r) (i32.const 3)))))
        (local.set $k (i32.const 0))
        (block $kdone (loop $kloop
          (br_if $kdone (i32.ge_s (local.get $k) (local.get $len)))
          (local.set $c (f64.abs
            (f64.load (i32.add (local.get $ptr) (i32.shl (local.get $k) (i32.const 3))))))
          (if (f64.gt (local.get $c) (f64.const 0))
            (then
              (local.set $i (i32.load (i32.add
                (i32.add (local.get $ptr) (i32.shl (local.get $len) (i32.const 3)))
                (i32.shl (local.get $k) (i32.const 2)))))
              (local.set $total (f64.add (local.get $total) (local.get $c)))
              (local.set $a (i32.add (local.get $acc) (i32.shl (local.get $i) (i32.const 3))))
              (local.set $v (f64.load (local.get $a)))
              (if (f64.eq (local.get $v) (f64.const 0))
                (then
                  (i32.store (i32.add (local.get $touched) (i32.shl (local.get $m) (i32.const 2)))
                    (local.get $i))
                  (local.set $m (i32.add (local.get $m) (i32.const 1)))))
              (f64.store (local.get $a) (f64.add (local.get $v) (local.get $c)))))
          (local.set $k (i32.add (local.get $k) (i32.const 1)))
          (br $kloop)))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $rloop)))
      (local.set $f (f64.const 0))
      (if (f64.gt (local.get $total) (f64.const 0))
        (then (local.set $f (f64.div (f64.load offset=16 (local.get $hdr))
          (f64.sqrt (local.get $total))))))
      (local.set $k (i32.const 0))
      (block $tdone (loop $tloop
        (br_if $tdone (i32.ge_s (local.get $k) (local.get $m)))
        (local.set $i (i32.load (i32.add (local.get $touched) (i32.shl (local.get $k) (i32.const 2)))))
        (local.set $a (i32.add (local.get $acc) (i32.shl (local.get $i) (i32.const 3))))
        (local.set $v (f64.load (local.get $a)))
        (f64.store (local.get $a) (f64.const 0))
        (local.set $col (i32.add (i32.load offset=8 (local.get $hdr)) (local.get $i)))
        (if (i32.and (f64.gt (local.get $f) (f64.const 0))
              (i32.lt_s (local.get $col) (local.get $inputDim)))
          (then
            (i32.store (i32.add (local.get $cols) (i32.shl (local.get $n) (i32.const 2)))
              (local.get $col))
            (f32.store (i32.add (local.get $vals) (i32.shl (local.get $n) (i32.const 2)))
              (f32.demote_f64 (f64.mul (f64.sqrt (local.get $v)) (local.get $f))))
            (local.set $n (i32.add (local.get $n) (i32.const 1)))))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $tloop)))
      (local.set $b (i32.add (local.get $b) (i32.const 1)))
      (br $bloop)))
    (local.get $n)
  )

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

  ;; psi[t][k] = exp(e[t][k] - max_k e[t][k]) for t < T (rows of K f64). exp is computed two
  ;; values at a time: x = n·ln2 + r (|r| <= ln2/2; n rounded with the 1.5·2^52 trick, which
  ;; also leaves n in the low bits; ln2 split in two parts so that n·ln2_hi is exact), exp(r) by
  ;; its Taylor series to degree 13 (truncation < 5e-18 relative) evaluated by Estrin's scheme
  ;; (short dependency chains), times 2^n made from the exponent bits. Within 2 ulp of Math.exp;
  ;; x is clamped at -708 (so exp(x) < 3.4e-308 comes out as 3.3e-308, a normal number).
  (func (export "expRows") (param $T i32) (param $K i32) (param $e i32) (param $psi i32)
    (local $i i32) (local $end i32) (local $row i32) (local $k i32) (local $max f64) (local $v f64)
    (local $x v128) (local $kr v128) (local $kf v128) (local $r v128) (local $r2 v128)
    (local $r4 v128)
    (local $p0 v128) (local $p1 v128) (local $p2 v128) (local $p3 v128) (local $p4 v128)
    (local $p5 v128) (local $p6 v128)
    (local $c0 v128) (local $c1 v128) (local $c2 v128) (local $c3 v128) (local $c4 v128) (local $c5 v128) (local $c6 v128) (local $c7 v128) (local $c8 v128) (local $c9 v128) (local $c10 v128) (local $c11 v128) (local $c12 v128) (local $c13 v128) (local $c14 v128) (local $c15 v128) (local $c16 v128) (local $c17 v128)
    ;; constants, hoisted out of the loop
    (local.set $c0 (f64x2.splat (f64.const -708)))
    (local.set $c1 (f64x2.splat (f64.const 1.4426950408889634)))
    (local.set $c2 (f64x2.splat (f64.const 6755399441055744)))
    (local.set $c3 (f64x2.splat (f64.const 6.93147180369123816490e-01)))
    (local.set $c4 (f64x2.splat (f64.const 1.90821492927058770002e-10)))
    (local.set $c5 (f64x2.splat (f64.const 1.0)))
    (local.set $c6 (f64x2.splat (f64.const 0.5)))
    (local.set $c7 (f64x2.splat (f64.const 0.16666666666666666)))
    (local.set $c8 (f64x2.splat (f64.const 0.041666666666666664)))
    (local.set $c9 (f64x2.splat (f64.const 0.008333333333333333)))
    (local.set $c10 (f64x2.splat (f64.const 0.001388888888888889)))
    (local.set $c11 (f64x2.splat (f64.const 0.0001984126984126984)))
    (local.set $c12 (f64x2.splat (f64.const 2.48015873015873e-05)))
    (local.set $c13 (f64x2.splat (f64.const 2.7557319223985893e-06)))
    (local.set $c14 (f64x2.splat (f64.const 2.755731922398589e-07)))
    (local.set $c15 (f64x2.splat (f64.const 2.505210838544172e-08)))
    (local.set $c16 (f64x2.splat (f64.const 2.08767569878681e-09)))
    (local.set $c17 (f64x2.splat (f64.const 1.6059043836821613e-10)))
    ;; x = e - rowmax, into psi
    (local.set $end (i32.mul (local.get $T) (local.get $K)))
    (block $rows (loop $rowLoop
      (br_if $rows (i32.ge_s (local.get $row) (local.get $end)))
      (local.set $max (f64.const -inf))
      (local.set $k (i32.const 0))
      (block $m (loop $mLoop
        (br_if $m (i32.ge_s (local.get $k) (local.get $K)))
        (local.set $v (f64.load (i32.add (local.get $e)
          (i32.shl (i32.add (local.get $row) (local.get $k)) (i32.const 3)))))
        (local.set $max (select (local.get $v) (local.get $max)
          (f64.gt (local.get $v) (local.get $max))))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $mLoop)))
      (local.set $k (i32.const 0))
      (block $d (loop $dLoop
        (br_if $d (i32.ge_s (local.get $k) (local.get $K)))
        (local.set $i (i32.shl (i32.add (local.get $row) (local.get $k)) (i32.const 3)))
        (f64.store (i32.add (local.get $psi) (local.get $i))
          (f64.sub (f64.load (i32.add (local.get $e) (local.get $i))) (local.get $max)))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (br $dLoop)))
      (local.set $row (i32.add (local.get $row) (local.get $K)))
      (br $rowLoop)))
    ;; exp in place, two at a time (a last odd value is paired with the padding after the rows)
    (local.set $end (i32.add (local.get $psi) (i32.shl (local.get $end) (i32.const 3))))
    (local.set $i (local.get $psi))
    (block $done (loop $loop
      (br_if $done (i32.ge_u (local.get $i) (local.get $end)))
      (local.set $x (f64x2.pmax (local.get $c0) (v128.load (local.get $i))))
      (local.set $kr (f64x2.add
        (f64x2.mul (local.get $x) (local.get $c1))
        (local.get $c2)))
      (local.set $kf (f64x2.sub (local.get $kr) (local.get $c2)))
      (local.set $r (f64x2.sub
        (f64x2.sub (local.get $x)
          (f64x2.mul (local.get $kf) (local.get $c3)))
        (f64x2.mul (local.get $kf) (local.get $c4))))
      (local.set $p0 (f64x2.add (local.get $c5) (f64x2.mul (local.get $c5) (local.get $r))))
      (local.set $p1 (f64x2.add (local.get $c6) (f64x2.mul (local.get $c7) (local.get $r))))
      (local.set $p2 (f64x2.add (local.get $c8) (f64x2.mul (local.get $c9) (local.get $r))))
      (local.set $p3 (f64x2.add (local.get $c10) (f64x2.mul (local.get $c11) (local.get $r))))
      (local.set $p4 (f64x2.add (local.get $c12) (f64x2.mul (local.get $c13) (local.get $r))))
      (local.set $p5 (f64x2.add (local.get $c14) (f64x2.mul (local.get $c15) (local.get $r))))
      (local.set $p6 (f64x2.add (local.get $c16) (f64x2.mul (local.get $c17) (local.get $r))))
      (local.set $r2 (f64x2.mul (local.get $r) (local.get $r)))
      (local.set $r4 (f64x2.mul (local.get $r2) (local.get $r2)))
      (local.set $p0 (f64x2.add (local.get $p0) (f64x2.mul (local.get $p1) (local.get $r2))))
      (local.set $p2 (f64x2.add (local.get $p2) (f64x2.mul (local.get $p3) (local.get $r2))))
      (local.set $p4 (f64x2.add (local.get $p4) (f64x2.mul (local.get $p5) (local.get $r2))))
      (local.set $p0 (f64x2.add (local.get $p0) (f64x2.mul (local.get $p2) (local.get $r4))))
      (local.set $p4 (f64x2.add (local.get $p4) (f64x2.mul (local.get $p6) (local.get $r4))))
      (local.set $p0 (f64x2.add (local.get $p0)
        (f64x2.mul (local.get $p4) (f64x2.mul (local.get $r4) (local.get $r4)))))
      ;; 2^n: n is the low bits of kr's representation (minus the constant's); n + 1023 >= 1
      (v128.store (local.get $i) (f64x2.mul (local.get $p0)
        (i64x2.shl
          (i64x2.add (i64x2.sub (local.get $kr) (local.get $c2))
            (i64x2.splat (i64.const 1023)))
          (i32.const 52))))
      (local.set $i (i32.add (local.get $i) (i32.const 16)))
      (br $loop)))
  )
)
