#!/bin/bash
# forge-recon reads BART's .cfl/.hdr arrays in one command: radial Shepp-Logan data made by BART itself (bart traj,
# bart phantom -k -t) reconstruct to the same voxels, bit for bit, as the same arrays converted to ISMRMRD
# (forge_mrd_cfl mrd), near BART's own pics; without --bart-maps the image matrix is BART's estimate from the
# trajectory. Hostile arrays (truncated data, bad or mismatched dims, a trajectory beyond the image's band, two
# ESPIRiT sets, NaN) and options BART data cannot serve are refused with exit 2, one error line and no output.
#   usage: test_bart_input.sh FORGE_RECON FORGE_MRD_CFL WORKDIR     (exit 77 = skipped without bart: apt-get install bart)
source "$(dirname "$0")/common.sh"
RECON=$1; CFL=$2; W=$3
command -v bart >/dev/null 2>&1 || { echo "SKIP: bart not installed (Debian: apt-get install bart)"; exit 77; }
workdir "$W"
cd "$W" || fail "cannot enter $W"
# 32x32 image, 4 coils, 33 spokes of 64 samples (2x readout oversampling, scaled to |k| <= 16 as BART's examples
# do): undersampled, and the analytic k-space of a 32-pixel phantom, so NRMSE near 0.5 against its pixels, for BART too
{ bart traj -r -x 64 -y 33 t && bart scale 0.5 t t2 && bart phantom -s 4 -k -t t2 k && bart phantom -x 32 -S 4 s &&
  bart phantom -x 32 ref; } >bart.log 2>&1 || { cat bart.log >&2; fail "bart could not make the data"; }

run() {  # name, forge-recon arguments
    local name=$1; shift
    "$RECON" "$@" -o "$W/$name" -n 20 --device cpu >"$name.stdout" 2>"$name.stderr" \
        || { cat "$name.stderr" >&2; fail "$name: forge-recon failed"; }
}
voxels() { tail -c +353 "$1"; }  # a NIfTI-1 file's values (after the 352-byte header and extension)

run bart --bart-kspace k --bart-traj t2.cfl --bart-maps s --reference ref.cfl
grep -q "image 32x32x1 (from --bart-maps)" bart.stdout || { cat bart.stdout >&2; fail "the image matrix is not the maps'"; }
"$CFL" mrd t2 k radial.h5 s ref || fail "forge_mrd_cfl could not convert the arrays to ISMRMRD"
run mrd radial.h5
cmp -s <(voxels bart.nii) <(voxels mrd.nii) || fail "the image from the BART arrays differs from the ISMRMRD file's"
nrmse=$(number_after "NRMSE vs reference" bart.stdout)
mrdNrmse=$(number_after "NRMSE vs reference" mrd.stdout)
[ "$nrmse" = "$mrdNrmse" ] || fail "NRMSE $nrmse from the BART arrays, $mrdNrmse from the ISMRMRD file"
le "$nrmse" 0.6 || fail "NRMSE $nrmse against BART's phantom (an all-zero image gives 1)"
echo "ok  --bart-kspace/--bart-traj/--bart-maps: the ISMRMRD file's image bit for bit, NRMSE $nrmse vs bart phantom"

# BART's own reconstruction of the same arrays lands near forge's (the same least-squares problem, unregularised)
bart pics -S -i 20 -t t2 k s pics >/dev/null 2>&1 || fail "bart pics failed"
picsNrmse=$("$CFL" nrmse radial.h5 pics | sed -n 's/NRMSE \([0-9.]*\).*/\1/p')
le "$(awk -v a="$nrmse" -v b="$picsNrmse" 'BEGIN { d = a - b; print (d < 0 ? -d : d) }')" 0.01 \
    || fail "NRMSE $nrmse of forge-recon, $picsNrmse of bart pics"
echo "ok  bart pics -S -i 20 on the same arrays: NRMSE $picsNrmse"

# without maps: BART's image size (2 * floor((2 max|k| + 1.5) / 2) = 32), coil maps estimated from the data
run est --bart-kspace k.cfl --bart-traj t2.hdr --reference ref.cfl
grep -q "image 32x32x1 (from the trajectory's extent" est.stdout || { cat est.stdout >&2; fail "no 32x32 from the trajectory"; }
echo "ok  no --bart-maps: 32x32 from the trajectory, NRMSE $(number_after "NRMSE vs reference" est.stdout)"

# refused: exit 2, one error line naming the problem, nothing written
refuse() {  # name, expected text of the error, forge-recon arguments
    local name=$1 expected=$2; shift 2
    "$RECON" "$@" -o "$W/refused_$name" -n 2 --device cpu >"$name.stdout" 2>"$name.stderr"
    local rc=$?
    [ $rc -eq 2 ] || { cat "$name.stderr" >&2; fail "$name: exit $rc, expected 2"; }
    [ "$(grep -c 'forge-recon: error:' "$name.stderr")" -eq 1 ] || { cat "$name.stderr" >&2; fail "$name: not one error line"; }
    grep -qF -- "$expected" "$name.stderr" || { cat "$name.stderr" >&2; fail "$name: the error does not say '$expected'"; }
    ls "$W"/refused_* >/dev/null 2>&1 && fail "$name: the refused run left an output"
    echo "ok  refused $name: $(sed -n 's/forge-recon: error: //p' "$name.stderr" | cut -c1-150)"
}
cp k.hdr cut.hdr && head -c 1000 k.cfl >cut.cfl
refuse truncated "the file is truncated" --bart-kspace cut --bart-traj t2
printf '# Dimensions\n1 64 33 -4\n' >neg.hdr && cp k.cfl neg.cfl
refuse negative "dimension 3 is '-4'" --bart-kspace neg --bart-traj t2
printf '# Dimensions\n1 64 33 4 1 1 1 1 1 1 4000000000 4000000000 4000000000\n' >huge.hdr && cp k.cfl huge.cfl
refuse huge "dimension 10 is '4000000000'" --bart-kspace huge --bart-traj t2
printf '# Dimensions\n1 64 33 4 1 1 1 1 1 1 2147483648 2147483648 2147483648\n' >overflow.hdr && cp k.cfl overflow.cfl
refuse overflow "overflows 64 bits" --bart-kspace overflow --bart-traj t2
printf '# Sizes\n1 64 33 4\n' >nodims.hdr && cp k.cfl nodims.cfl
refuse nodims "no '# Dimensions' line" --bart-kspace nodims --bart-traj t2
bart resize 1 60 k k60 >/dev/null 2>&1 || fail "bart resize"
refuse samples "differ in dimension 1 (samples): 64 and 60" --bart-kspace k60 --bart-traj t2
refuse band "is outside [-16, 16]" --bart-kspace k --bart-traj t --bart-maps s
bart join 4 s s s2 >/dev/null 2>&1 || fail "bart join"
refuse espirit "2 ESPIRiT sets" --bart-kspace k --bart-traj t2 --bart-maps s2
bart phantom -x 32 -S 3 s3 >/dev/null 2>&1 || fail "bart phantom -S 3"
refuse coils "3 coils, 1 slices) but the k-space 4 coils" --bart-kspace k --bart-traj t2 --bart-maps s3
cp k.hdr nan.hdr && cp k.cfl nan.cfl && printf '\x00\x00\xc0\x7f' | dd of=nan.cfl bs=1 seek=800 conv=notrunc 2>/dev/null
refuse nan "non-finite value (NaN or Inf) at element 100" --bart-kspace nan --bart-traj t2
refuse missing "'nothere.hdr' does not exist" --bart-kspace nothere --bart-traj t2
refuse notraj "requires --bart-traj" --bart-kspace k
refuse both "both give the data" radial.h5 --bart-kspace k --bart-traj t2
refuse fieldmap "carry no sample times" --bart-kspace k --bart-traj t2 --fieldmap estimate
refuse twomaps "--bart-maps and --smaps" --bart-kspace k --bart-traj t2 --bart-maps s --smaps s.cfl
exit 0
