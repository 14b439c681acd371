// Control flow that a SIMT engine must reconverge without structured loops: a large dense switch whose
// cases do different work (lowered to a jump table, brx.idx), and an irreducible loop entered at two
// points through goto (a state machine, as lexers and generated code contain).
__device__ __noinline__ int f0(int x) { return x + 1; }
__device__ __noinline__ int f1(int x) { return x * 3; }

extern "C" __global__ void jumps(const int* sel, const int* v, int* out) {
    int t = threadIdx.x, x = v[t], r = 0;
    switch (sel[t]) {
        case 0: r = f0(x); break;
        case 1: r = f1(x); break;
        case 2: r = x ^ 0x1234; out[64 + t] = 2; break;
        case 3: r = x << 3; out[64 + t] = 3; break;
        case 4: r = __popc(x) + 40; break;
        case 5: r = f0(f1(x)); break;
        case 6: r = x % 7; out[64 + t] = 6; break;
        case 7: r = -x; break;
        case 8: r = x * x; out[64 + t] = 8; break;
        case 9: r = f1(x) - f0(x); break;
        case 10: r = x / 3; break;
        case 11: r = __brev(x); out[64 + t] = 11; break;
        case 12: r = x | 0xF0; break;
        case 13: r = f0(x) * 2; break;
        case 14: r = max(x, 100); out[64 + t] = 14; break;
        case 15: r = min(x, -100); break;
        default: r = 999;
    }
    out[t] = r;
    // irreducible: state A and state B both reachable from the entry, each jumps into the other
    int steps = 0, acc = x & 1023;
    if (x & 1) goto B;
A:
    acc = acc * 3 + 1;
    steps++;
    if (acc % 5 == 0 || steps > 40) goto done;
B:
    acc = acc / 2 + 7;
    steps++;
    if (steps < 30) goto A;
done:
    out[128 + t] = acc * 100 + steps;
}
