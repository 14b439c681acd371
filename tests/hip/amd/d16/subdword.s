000000004B00 s_load_dword s3, s[0:1], 0x3c
000000004B08 s_load_dword s4, s[0:1], 0x28
000000004B10 s_waitcnt lgkmcnt(0)
000000004B14 s_and_b32 s3, s3, 0xffff
000000004B1C s_mul_i32 s2, s2, s3
000000004B20 v_add_u32_e32 v0, s2, v0
000000004B24 v_cmp_gt_i32_e32 vcc, s4, v0
000000004B28 s_and_saveexec_b64 s[2:3], vcc
000000004B2C s_cbranch_execz 52
000000004B30 s_load_dwordx8 s[4:11], s[0:1], 0x0
000000004B38 v_ashrrev_i32_e32 v1, 31, v0
000000004B3C s_load_dwordx2 s[0:1], s[0:1], 0x20
000000004B44 s_waitcnt lgkmcnt(0)
000000004B48 v_lshl_add_u64 v[2:3], s[4:5], 0, v[0:1]
000000004B50 v_lshl_add_u64 v[4:5], s[6:7], 0, v[0:1]
000000004B58 v_lshl_add_u64 v[6:7], s[8:9], 0, v[0:1]
000000004B60 global_load_sbyte v8, v[2:3], off
000000004B68 global_load_sbyte v9, v[4:5], off
000000004B70 global_load_ubyte v10, v[6:7], off
000000004B78 v_lshl_add_u64 v[2:3], s[10:11], 0, v[0:1]
000000004B80 global_load_ubyte v4, v[2:3], off
000000004B88 v_mov_b32_e32 v2, s0
000000004B8C v_mov_b32_e32 v3, s1
000000004B90 v_lshl_add_u64 v[0:1], v[0:1], 2, v[2:3]
000000004B98 s_waitcnt vmcnt(2)
000000004B9C v_cmp_gt_i16_e32 vcc, v8, v9
000000004BA0 s_nop 1
000000004BA4 v_cndmask_b32_e64 v5, 0, 1, vcc
000000004BAC s_waitcnt vmcnt(0)
000000004BB0 v_cmp_lt_u16_e32 vcc, v10, v4
000000004BB4 s_nop 1
000000004BB8 v_cndmask_b32_e64 v6, 0, 1, vcc
000000004BC0 v_cmp_ne_u16_e32 vcc, v10, v4
000000004BC4 v_lshlrev_b32_e32 v6, 1, v6
000000004BC8 s_nop 0
000000004BCC v_cndmask_b32_e64 v4, 0, 1, vcc
000000004BD4 v_cmp_le_i16_e32 vcc, v8, v9
000000004BD8 v_lshlrev_b32_e32 v4, 2, v4
000000004BDC s_nop 0
000000004BE0 v_cndmask_b32_e64 v7, 0, 1, vcc
000000004BE8 v_lshl_or_b32 v5, v7, 3, v5
000000004BF0 v_or3_b32 v4, v5, v6, v4
000000004BF8 global_store_dword v[0:1], v4, off
000000004C00 s_endpgm
000000004C04 s_nop 0
000000004C08 s_nop 0
000000004C0C s_nop 0
000000004C10 s_nop 0
000000004C14 s_nop 0
000000004C18 s_nop 0
000000004C1C s_nop 0
000000004C20 s_nop 0
000000004C24 s_nop 0
000000004C28 s_nop 0
000000004C2C s_nop 0
000000004C30 s_nop 0
000000004C34 s_nop 0
000000004C38 s_nop 0
000000004C3C s_nop 0
000000004C40 s_nop 0
000000004C44 s_nop 0
000000004C48 s_nop 0
000000004C4C s_nop 0
000000004C50 s_nop 0
000000004C54 s_nop 0
000000004C58 s_nop 0
000000004C5C s_nop 0
000000004C60 s_nop 0
000000004C64 s_nop 0
000000004C68 s_nop 0
000000004C6C s_nop 0
000000004C70 s_nop 0
000000004C74 s_nop 0
000000004C78 s_nop 0
000000004C7C s_nop 0
000000004C80 s_nop 0
000000004C84 s_nop 0
000000004C88 s_nop 0
000000004C8C s_nop 0
000000004C90 s_nop 0
000000004C94 s_nop 0
000000004C98 s_nop 0
000000004C9C s_nop 0
000000004CA0 s_nop 0
000000004CA4 s_nop 0
000000004CA8 s_nop 0
000000004CAC s_nop 0
000000004CB0 s_nop 0
000000004CB4 s_nop 0
000000004CB8 s_nop 0
000000004CBC s_nop 0
000000004CC0 s_nop 0
000000004CC4 s_nop 0
000000004CC8 s_nop 0
000000004CCC s_nop 0
000000004CD0 s_nop 0
000000004CD4 s_nop 0
000000004CD8 s_nop 0
000000004CDC s_nop 0
000000004CE0 s_nop 0
000000004CE4 s_nop 0
000000004CE8 s_nop 0
000000004CEC s_nop 0
000000004CF0 s_nop 0
000000004CF4 s_nop 0
000000004CF8 s_nop 0
000000004CFC s_nop 0
000000004D00 s_load_dword s3, s[0:1], 0x3c
000000004D08 s_load_dword s4, s[0:1], 0x28
000000004D10 s_waitcnt lgkmcnt(0)
000000004D14 s_and_b32 s3, s3, 0xffff
000000004D1C s_mul_i32 s2, s2, s3
000000004D20 v_add_u32_e32 v0, s2, v0
000000004D24 v_cmp_gt_i32_e32 vcc, s4, v0
000000004D28 s_and_saveexec_b64 s[2:3], vcc
000000004D2C s_cbranch_execz 54
000000004D30 s_load_dwordx8 s[4:11], s[0:1], 0x0
000000004D38 v_ashrrev_i32_e32 v1, 31, v0
000000004D3C v_lshlrev_b64 v[2:3], 1, v[0:1]
000000004D44 s_load_dwordx2 s[0:1], s[0:1], 0x20
000000004D4C s_waitcnt lgkmcnt(0)
000000004D50 v_lshl_add_u64 v[4:5], s[4:5], 0, v[2:3]
000000004D58 v_lshl_add_u64 v[6:7], s[6:7], 0, v[2:3]
000000004D60 global_load_ushort v8, v[4:5], off
000000004D68 global_load_ushort v9, v[6:7], off
000000004D70 v_lshl_add_u64 v[4:5], s[8:9], 0, v[2:3]
000000004D78 v_lshl_add_u64 v[2:3], s[10:11], 0, v[2:3]
000000004D80 global_load_ushort v4, v[4:5], off
000000004D88 s_waitcnt vmcnt(1)
000000004D8C v_cmp_gt_i16_e32 vcc, v8, v9
000000004D90 global_load_ushort v5, v[2:3], off
000000004D98 s_nop 0
000000004D9C v_cndmask_b32_e64 v6, 0, 1, vcc
000000004DA4 v_mov_b32_e32 v2, s0
000000004DA8 v_mov_b32_e32 v3, s1
000000004DAC v_lshl_add_u64 v[0:1], v[0:1], 2, v[2:3]
000000004DB4 s_waitcnt vmcnt(0)
000000004DB8 v_cmp_lt_u16_e32 vcc, v4, v5
000000004DBC s_nop 1
000000004DC0 v_cndmask_b32_e64 v7, 0, 1, vcc
000000004DC8 v_cmp_ne_u16_e32 vcc, v4, v5
000000004DCC v_lshlrev_b32_e32 v7, 1, v7
000000004DD0 s_nop 0
000000004DD4 v_cndmask_b32_e64 v4, 0, 1, vcc
000000004DDC v_cmp_ge_i16_e32 vcc, v8, v9
000000004DE0 v_lshlrev_b32_e32 v4, 2, v4
000000004DE4 s_nop 0
000000004DE8 v_cndmask_b32_e64 v5, 0, 1, vcc
000000004DF0 v_lshl_or_b32 v5, v5, 3, v6
000000004DF8 v_or3_b32 v4, v5, v7, v4
000000004E00 global_store_dword v[0:1], v4, off
000000004E08 s_endpgm
000000004E0C s_nop 0
000000004E10 s_nop 0
000000004E14 s_nop 0
000000004E18 s_nop 0
000000004E1C s_nop 0
000000004E20 s_nop 0
000000004E24 s_nop 0
000000004E28 s_nop 0
000000004E2C s_nop 0
000000004E30 s_nop 0
000000004E34 s_nop 0
000000004E38 s_nop 0
000000004E3C s_nop 0
000000004E40 s_nop 0
000000004E44 s_nop 0
000000004E48 s_nop 0
000000004E4C s_nop 0
000000004E50 s_nop 0
000000004E54 s_nop 0
000000004E58 s_nop 0
000000004E5C s_nop 0
000000004E60 s_nop 0
000000004E64 s_nop 0
000000004E68 s_nop 0
000000004E6C s_nop 0
000000004E70 s_nop 0
000000004E74 s_nop 0
000000004E78 s_nop 0
000000004E7C s_nop 0
000000004E80 s_nop 0
000000004E84 s_nop 0
000000004E88 s_nop 0
000000004E8C s_nop 0
000000004E90 s_nop 0
000000004E94 s_nop 0
000000004E98 s_nop 0
000000004E9C s_nop 0
000000004EA0 s_nop 0
000000004EA4 s_nop 0
000000004EA8 s_nop 0
000000004EAC s_nop 0
000000004EB0 s_nop 0
000000004EB4 s_nop 0
000000004EB8 s_nop 0
000000004EBC s_nop 0
000000004EC0 s_nop 0
000000004EC4 s_nop 0
000000004EC8 s_nop 0
000000004ECC s_nop 0
000000004ED0 s_nop 0
000000004ED4 s_nop 0
000000004ED8 s_nop 0
000000004EDC s_nop 0
000000004EE0 s_nop 0
000000004EE4 s_nop 0
000000004EE8 s_nop 0
000000004EEC s_nop 0
000000004EF0 s_nop 0
000000004EF4 s_nop 0
000000004EF8 s_nop 0
000000004EFC s_nop 0
000000004F00 s_load_dword s3, s[0:1], 0x2c
000000004F08 s_load_dword s4, s[0:1], 0x18
000000004F10 s_waitcnt lgkmcnt(0)
000000004F14 s_and_b32 s3, s3, 0xffff
000000004F1C s_mul_i32 s2, s2, s3
000000004F20 v_add_u32_e32 v0, s2, v0
000000004F24 v_cmp_gt_i32_e32 vcc, s4, v0
000000004F28 s_and_saveexec_b64 s[2:3], vcc
000000004F2C s_cbranch_execz 22
000000004F30 s_load_dwordx4 s[4:7], s[0:1], 0x0
000000004F38 s_load_dwordx2 s[2:3], s[0:1], 0x10
000000004F40 v_ashrrev_i32_e32 v1, 31, v0
000000004F44 s_waitcnt lgkmcnt(0)
000000004F48 v_lshl_add_u64 v[2:3], s[4:5], 0, v[0:1]
000000004F50 v_lshl_add_u64 v[4:5], s[6:7], 0, v[0:1]
000000004F58 global_load_ubyte v6, v[2:3], off
000000004F60 global_load_sbyte v7, v[4:5], off
000000004F68 v_mov_b32_e32 v2, s2
000000004F6C v_mov_b32_e32 v3, s3
000000004F70 v_lshl_add_u64 v[0:1], v[0:1], 1, v[2:3]
000000004F78 s_waitcnt vmcnt(0)
000000004F7C v_mul_lo_u16_e32 v4, v7, v6
000000004F80 global_store_short v[0:1], v4, off
000000004F88 s_endpgm
000000004F8C s_nop 0
000000004F90 s_nop 0
000000004F94 s_nop 0
000000004F98 s_nop 0
000000004F9C s_nop 0
000000004FA0 s_nop 0
000000004FA4 s_nop 0
000000004FA8 s_nop 0
000000004FAC s_nop 0
000000004FB0 s_nop 0
000000004FB4 s_nop 0
000000004FB8 s_nop 0
000000004FBC s_nop 0
000000004FC0 s_nop 0
000000004FC4 s_nop 0
000000004FC8 s_nop 0
000000004FCC s_nop 0
000000004FD0 s_nop 0
000000004FD4 s_nop 0
000000004FD8 s_nop 0
000000004FDC s_nop 0
000000004FE0 s_nop 0
000000004FE4 s_nop 0
000000004FE8 s_nop 0
000000004FEC s_nop 0
000000004FF0 s_nop 0
000000004FF4 s_nop 0
000000004FF8 s_nop 0
000000004FFC s_nop 0
000000005000 s_load_dword s3, s[0:1], 0x2c
000000005008 s_load_dword s4, s[0:1], 0x18
000000005010 s_waitcnt lgkmcnt(0)
000000005014 s_and_b32 s3, s3, 0xffff
00000000501C s_mul_i32 s2, s2, s3
000000005020 v_add_lshl_u32 v0, s2, v0, 1
000000005028 v_or_b32_e32 v1, 1, v0
00000000502C v_cmp_gt_i32_e32 vcc, s4, v1
000000005030 s_and_saveexec_b64 s[2:3], vcc
000000005034 s_cbranch_execz 42
000000005038 s_load_dwordx4 s[4:7], s[0:1], 0x0
000000005040 s_load_dwordx2 s[2:3], s[0:1], 0x10
000000005048 v_ashrrev_i32_e32 v1, 31, v0
00000000504C v_lshlrev_b64 v[0:1], 1, v[0:1]
000000005054 s_mov_b32 s0, 0x5040100
00000000505C s_waitcnt lgkmcnt(0)
000000005060 v_lshl_add_u64 v[2:3], s[4:5], 0, v[0:1]
000000005068 v_lshl_add_u64 v[4:5], s[6:7], 0, v[0:1]
000000005070 global_load_dword v6, v[2:3], off
000000005078 global_load_dword v7, v[4:5], off
000000005080 v_lshl_add_u64 v[0:1], s[2:3], 0, v[0:1]
000000005088 s_waitcnt vmcnt(1)
00000000508C v_pk_lshrrev_b16 v2, 1, v6 op_sel_hi:[0,1]
000000005094 s_waitcnt vmcnt(0)
000000005098 v_pk_sub_i16 v2, v2, v7
0000000050A0 v_xor_b32_e32 v3, v7, v6
0000000050A4 v_pk_mad_u16 v2, v7, v6, v2
0000000050AC v_lshrrev_b32_e32 v4, 16, v3
0000000050B0 v_lshrrev_b32_e32 v5, 16, v2
0000000050B4 v_cmp_lt_u16_e32 vcc, v2, v6
0000000050B8 s_nop 1
0000000050BC v_cndmask_b32_e32 v2, v3, v2, vcc
0000000050C0 v_cmp_lt_u16_sdwa vcc, v5, v6 src0_sel:DWORD src1_sel:WORD_1
0000000050C8 s_nop 1
0000000050CC v_cndmask_b32_e32 v3, v4, v5, vcc
0000000050D0 v_perm_b32 v2, v3, v2, s0
0000000050D8 global_store_dword v[0:1], v2, off
0000000050E0 s_endpgm
0000000050E4 s_nop 0
0000000050E8 s_nop 0
0000000050EC s_nop 0
0000000050F0 s_nop 0
0000000050F4 s_nop 0
0000000050F8 s_nop 0
0000000050FC s_nop 0
000000005100 s_load_dword s3, s[0:1], 0x24
000000005108 s_load_dword s4, s[0:1], 0x10
000000005110 s_waitcnt lgkmcnt(0)
000000005114 s_and_b32 s3, s3, 0xffff
00000000511C s_mul_i32 s2, s2, s3
000000005120 v_add_lshl_u32 v0, s2, v0, 1
000000005128 v_or_b32_e32 v1, 1, v0
00000000512C v_cmp_gt_i32_e32 vcc, s4, v1
000000005130 s_and_saveexec_b64 s[2:3], vcc
000000005134 s_cbranch_execz 27
000000005138 s_load_dwordx4 s[0:3], s[0:1], 0x0
000000005140 v_ashrrev_i32_e32 v1, 31, v0
000000005144 s_waitcnt lgkmcnt(0)
000000005148 v_mov_b32_e32 v2, s0
00000000514C v_mov_b32_e32 v3, s1
000000005150 v_lshl_add_u64 v[2:3], v[0:1], 1, v[2:3]
000000005158 global_load_dword v3, v[2:3], off
000000005160 s_mov_b32 s1, 1.0
000000005164 v_mov_b32_e32 v4, s2
000000005168 v_mov_b32_e32 v5, s3
00000000516C v_lshl_add_u64 v[0:1], v[0:1], 2, v[4:5]
000000005174 s_waitcnt vmcnt(0)
000000005178 v_cvt_f32_f16_e32 v2, v3
00000000517C v_cvt_f32_f16_sdwa v3, v3 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_1
000000005184 v_pk_add_f32 v[4:5], v[2:3], v[2:3]
00000000518C v_pk_add_f32 v[2:3], v[2:3], s[0:1]
000000005194 s_nop 0
000000005198 v_mov_b32_e32 v5, v3
00000000519C global_store_dwordx2 v[0:1], v[4:5], off
0000000051A4 s_endpgm
0000000051A8 s_nop 0
0000000051AC s_nop 0
0000000051B0 s_nop 0
0000000051B4 s_nop 0
0000000051B8 s_nop 0
0000000051BC s_nop 0
0000000051C0 s_nop 0
0000000051C4 s_nop 0
0000000051C8 s_nop 0
0000000051CC s_nop 0
0000000051D0 s_nop 0
0000000051D4 s_nop 0
0000000051D8 s_nop 0
0000000051DC s_nop 0
0000000051E0 s_nop 0
0000000051E4 s_nop 0
0000000051E8 s_nop 0
0000000051EC s_nop 0
0000000051F0 s_nop 0
0000000051F4 s_nop 0
0000000051F8 s_nop 0
0000000051FC s_nop 0
000000005200 s_load_dwordx4 s[4:7], s[0:1], 0x0
000000005208 s_lshl_b32 s0, s2, 8
00000000520C v_add_u32_e32 v4, s0, v0
000000005210 v_mov_b32_e32 v5, 0
000000005214 v_lshlrev_b32_e32 v0, 1, v0
000000005218 s_waitcnt lgkmcnt(0)
00000000521C v_mov_b32_e32 v2, s4
000000005220 v_mov_b32_e32 v3, s5
000000005224 v_lshl_add_u64 v[2:3], v[4:5], 2, v[2:3]
00000000522C global_load_dword v1, v[2:3], off
000000005234 v_sub_u32_e32 v2, 0, v0
000000005238 v_add_u32_e32 v4, s0, v4
00000000523C s_waitcnt vmcnt(0)
000000005240 ds_write_b16 v0, v1
000000005248 ds_write_b16_d16_hi v0, v1 offset:512
000000005250 s_waitcnt lgkmcnt(0)
000000005254 s_barrier
000000005258 ds_read_u16 v6, v2 offset:1022
000000005260 ds_read_u16 v7, v2 offset:510
000000005268 v_lshl_add_u64 v[0:1], v[4:5], 1, s[6:7]
000000005270 v_add_u32_e32 v4, 0x100, v4
000000005278 v_lshl_add_u64 v[2:3], v[4:5], 1, s[6:7]
000000005280 s_waitcnt lgkmcnt(1)
000000005284 global_store_short v[0:1], v6, off
00000000528C s_waitcnt lgkmcnt(0)
000000005290 global_store_short v[2:3], v7, off
000000005298 s_endpgm
00000000529C s_nop 0
0000000052A0 s_nop 0
0000000052A4 s_nop 0
0000000052A8 s_nop 0
0000000052AC s_nop 0
0000000052B0 s_nop 0
0000000052B4 s_nop 0
0000000052B8 s_nop 0
0000000052BC s_nop 0
0000000052C0 s_nop 0
0000000052C4 s_nop 0
0000000052C8 s_nop 0
0000000052CC s_nop 0
0000000052D0 s_nop 0
0000000052D4 s_nop 0
0000000052D8 s_nop 0
0000000052DC s_nop 0
0000000052E0 s_nop 0
0000000052E4 s_nop 0
0000000052E8 s_nop 0
0000000052EC s_nop 0
0000000052F0 s_nop 0
0000000052F4 s_nop 0
0000000052F8 s_nop 0
0000000052FC s_nop 0
000000005300 s_load_dword s3, s[0:1], 0x44
000000005308 s_load_dword s4, s[0:1], 0x30
000000005310 s_waitcnt lgkmcnt(0)
000000005314 s_and_b32 s3, s3, 0xffff
00000000531C s_mul_i32 s2, s2, s3
000000005320 v_add_u32_e32 v0, s2, v0
000000005324 v_cmp_gt_i32_e32 vcc, s4, v0
000000005328 s_and_saveexec_b64 s[2:3], vcc
00000000532C s_cbranch_execz 40
000000005330 s_load_dwordx8 s[4:11], s[0:1], 0x0
000000005338 v_ashrrev_i32_e32 v1, 31, v0
00000000533C v_lshlrev_b64 v[2:3], 2, v[0:1]
000000005344 v_lshlrev_b64 v[0:1], 3, v[0:1]
00000000534C s_load_dwordx4 s[0:3], s[0:1], 0x20
000000005354 s_waitcnt lgkmcnt(0)
000000005358 v_lshl_add_u64 v[4:5], s[4:5], 0, v[2:3]
000000005360 global_load_dword v10, v[4:5], off
000000005368 v_lshl_add_u64 v[4:5], s[6:7], 0, v[0:1]
000000005370 global_load_dwordx2 v[4:5], v[4:5], off
000000005378 v_lshl_add_u64 v[6:7], s[8:9], 0, v[2:3]
000000005380 v_lshl_add_u64 v[8:9], s[10:11], 0, v[2:3]
000000005388 v_lshl_add_u64 v[0:1], s[0:1], 0, v[0:1]
000000005390 v_lshl_add_u64 v[2:3], s[2:3], 0, v[2:3]
000000005398 s_waitcnt vmcnt(1)
00000000539C v_frexp_exp_i32_f32_e32 v11, v10
0000000053A0 v_frexp_mant_f32_e32 v10, v10
0000000053A4 s_waitcnt vmcnt(0)
0000000053A8 v_frexp_exp_i32_f64_e32 v12, v[4:5]
0000000053AC v_frexp_mant_f64_e32 v[4:5], v[4:5]
0000000053B0 global_store_dword v[6:7], v10, off
0000000053B8 global_store_dword v[8:9], v11, off
0000000053C0 global_store_dwordx2 v[0:1], v[4:5], off
0000000053C8 global_store_dword v[2:3], v12, off
0000000053D0 s_endpgm
0000000053D4 s_nop 0
0000000053D8 s_nop 0
0000000053DC s_nop 0
0000000053E0 s_nop 0
0000000053E4 s_nop 0
0000000053E8 s_nop 0
0000000053EC s_nop 0
0000000053F0 s_nop 0
0000000053F4 s_nop 0
0000000053F8 s_nop 0
0000000053FC s_nop 0
000000005400 s_load_dword s4, s[0:1], 0x2c
000000005408 s_load_dword s3, s[0:1], 0x18
000000005410 s_waitcnt lgkmcnt(0)
000000005414 s_and_b32 s4, s4, 0xffff
00000000541C s_mul_i32 s2, s2, s4
000000005420 v_add_u32_e32 v0, s2, v0
000000005424 v_cmp_gt_i32_e32 vcc, s3, v0
000000005428 s_and_saveexec_b64 s[4:5], vcc
00000000542C s_cbranch_execz 28
000000005430 s_load_dwordx4 s[4:7], s[0:1], 0x0
000000005438 s_load_dwordx2 s[8:9], s[0:1], 0x10
000000005440 v_ashrrev_i32_e32 v1, 31, v0
000000005444 v_xad_u32 v4, v0, -1, s3
00000000544C v_ashrrev_i32_e32 v5, 31, v4
000000005450 s_waitcnt lgkmcnt(0)
000000005454 v_mov_b32_e32 v2, s4
000000005458 v_mov_b32_e32 v3, s5
00000000545C v_lshl_add_u64 v[2:3], v[0:1], 1, v[2:3]
000000005464 global_load_ushort v6, v[2:3], off
00000000546C v_mov_b32_e32 v2, s6
000000005470 v_mov_b32_e32 v3, s7
000000005474 v_lshl_add_u64 v[2:3], v[4:5], 1, v[2:3]
00000000547C global_load_short_d16_hi v6, v[2:3], off
000000005484 v_mov_b32_e32 v2, s8
000000005488 v_mov_b32_e32 v3, s9
00000000548C v_lshl_add_u64 v[0:1], v[0:1], 2, v[2:3]
000000005494 s_waitcnt vmcnt(0)
000000005498 global_store_dword v[0:1], v6, off
0000000054A0 s_endpgm
0000000054A4 s_nop 0
0000000054A8 s_nop 0
0000000054AC s_nop 0
0000000054B0 s_nop 0
0000000054B4 s_nop 0
0000000054B8 s_nop 0
0000000054BC s_nop 0
0000000054C0 s_nop 0
0000000054C4 s_nop 0
0000000054C8 s_nop 0
0000000054CC s_nop 0
0000000054D0 s_nop 0
0000000054D4 s_nop 0
0000000054D8 s_nop 0
0000000054DC s_nop 0
0000000054E0 s_nop 0
0000000054E4 s_nop 0
0000000054E8 s_nop 0
0000000054EC s_nop 0
0000000054F0 s_nop 0
0000000054F4 s_nop 0
0000000054F8 s_nop 0
0000000054FC s_nop 0
000000005500 s_load_dwordx4 s[4:7], s[0:1], 0x0
000000005508 v_mov_b32_e32 v3, 0
00000000550C v_lshl_add_u32 v2, s2, 9, v0
000000005514 v_add_u32_e32 v6, 0x100, v2
00000000551C v_mov_b32_e32 v7, v3
000000005520 s_waitcnt lgkmcnt(0)
000000005524 v_lshl_add_u64 v[4:5], v[2:3], 1, s[4:5]
00000000552C v_lshl_add_u64 v[6:7], v[6:7], 1, s[4:5]
000000005534 global_load_ushort v1, v[4:5], off
00000000553C global_load_ushort v8, v[6:7], off
000000005544 v_lshlrev_b32_e32 v4, 1, v0
000000005548 v_add_u32_e32 v5, v4, v4
00000000554C v_lshlrev_b32_e32 v0, 2, v0
000000005550 v_sub_u32_e32 v0, 0, v0
000000005554 s_lshl_b32 s0, s2, 8
000000005558 v_subrev_u32_e32 v2, s0, v2
00000000555C s_waitcnt vmcnt(1)
000000005560 ds_write_b16 v4, v1
000000005568 s_waitcnt vmcnt(0)
00000000556C ds_write_b16 v4, v8 offset:512
000000005574 s_waitcnt lgkmcnt(0)
000000005578 s_barrier
00000000557C ds_read_u16 v6, v5 offset:2
000000005584 v_mov_b32_e32 v4, s6
000000005588 v_mov_b32_e32 v5, s7
00000000558C s_waitcnt lgkmcnt(0)
000000005590 ds_read_u16_d16_hi v6, v0 offset:1022
000000005598 v_lshl_add_u64 v[0:1], v[2:3], 2, v[4:5]
0000000055A0 s_waitcnt lgkmcnt(0)
0000000055A4 global_store_dword v[0:1], v6, off
0000000055AC s_endpgm
0000000055B0 s_nop 0
0000000055B4 s_nop 0
0000000055B8 s_nop 0
0000000055BC s_nop 0
0000000055C0 s_nop 0
0000000055C4 s_nop 0
0000000055C8 s_nop 0
0000000055CC s_nop 0
0000000055D0 s_nop 0
0000000055D4 s_nop 0
0000000055D8 s_nop 0
0000000055DC s_nop 0
0000000055E0 s_nop 0
0000000055E4 s_nop 0
0000000055E8 s_nop 0
0000000055EC s_nop 0
0000000055F0 s_nop 0
0000000055F4 s_nop 0
0000000055F8 s_nop 0
0000000055FC s_nop 0
000000005600 s_load_dwordx4 s[4:7], s[0:1], 0x0
000000005608 s_load_dwordx2 s[8:9], s[0:1], 0x10
000000005610 s_mul_i32 s3, s2, 0x810
000000005618 s_mov_b64 s[10:11], 0
00000000561C s_movk_i32 s12, 0x70f
000000005620 v_mov_b32_e32 v1, v0
000000005624 v_add_u32_e32 v2, s3, v1
000000005628 s_waitcnt lgkmcnt(0)
00000000562C global_load_ubyte v2, v2, s[4:5]
000000005634 v_add_u32_e32 v3, 0x100, v1
00000000563C v_cmp_lt_u32_e32 vcc, s12, v1
000000005640 s_or_b64 s[10:11], vcc, s[10:11]
000000005644 s_waitcnt vmcnt(0)
000000005648 ds_write_b8 v1, v2
000000005650 v_mov_b32_e32 v1, v3
000000005654 s_andn2_b64 exec, exec, s[10:11]
000000005658 s_cbranch_execnz 65522
00000000565C s_or_b64 exec, exec, s[10:11]
000000005660 s_load_dword s0, s[0:1], 0x18
000000005668 v_lshlrev_b32_e32 v1, 2, v0
00000000566C s_waitcnt lgkmcnt(0)
000000005670 s_barrier
000000005674 v_add_u32_e32 v8, s0, v1
000000005678 v_add_u32_e32 v1, v8, v1
00000000567C ds_read_b32 v9, v8
000000005684 ds_read_b64 v[6:7], v1
00000000568C v_mov_b32_e32 v2, s6
000000005690 v_mov_b32_e32 v3, s7
000000005694 v_mov_b32_e32 v4, s8
000000005698 v_mov_b32_e32 v5, s9
00000000569C v_lshl_add_u32 v0, s2, 8, v0
0000000056A4 v_mov_b32_e32 v1, 0
0000000056A8 v_lshl_add_u64 v[2:3], v[0:1], 2, v[2:3]
0000000056B0 v_lshl_add_u64 v[0:1], v[0:1], 3, v[4:5]
0000000056B8 s_waitcnt lgkmcnt(1)
0000000056BC global_store_dword v[2:3], v9, off
0000000056C4 s_waitcnt lgkmcnt(0)
0000000056C8 global_store_dwordx2 v[0:1], v[6:7], off
0000000056D0 s_barrier
0000000056D4 global_load_dword v0, v[2:3], off
0000000056DC s_waitcnt vmcnt(0)
0000000056E0 v_lshl_add_u32 v0, v0, 1, v0
0000000056E8 ds_write_b32 v8, v0
0000000056F0 s_waitcnt lgkmcnt(0)
0000000056F4 s_barrier
0000000056F8 ds_read_b32 v0, v8
000000005700 s_waitcnt lgkmcnt(0)
000000005704 global_store_dword v[2:3], v0, off
00000000570C s_endpgm
000000005710 s_nop 0
000000005714 s_nop 0
000000005718 s_nop 0
00000000571C s_nop 0
000000005720 s_nop 0
000000005724 s_nop 0
000000005728 s_nop 0
00000000572C s_nop 0
000000005730 s_nop 0
000000005734 s_nop 0
000000005738 s_nop 0
00000000573C s_nop 0
000000005740 s_nop 0
000000005744 s_nop 0
000000005748 s_nop 0
00000000574C s_nop 0
000000005750 s_nop 0
000000005754 s_nop 0
000000005758 s_nop 0
00000000575C s_nop 0
000000005760 s_nop 0
000000005764 s_nop 0
000000005768 s_nop 0
00000000576C s_nop 0
000000005770 s_nop 0
000000005774 s_nop 0
000000005778 s_nop 0
00000000577C s_nop 0
000000005780 s_nop 0
000000005784 s_nop 0
000000005788 s_nop 0
00000000578C s_nop 0
000000005790 s_nop 0
000000005794 s_nop 0
000000005798 s_nop 0
00000000579C s_nop 0
0000000057A0 s_nop 0
0000000057A4 s_nop 0
0000000057A8 s_nop 0
0000000057AC s_nop 0
0000000057B0 s_nop 0
0000000057B4 s_nop 0
0000000057B8 s_nop 0
0000000057BC s_nop 0
0000000057C0 s_nop 0
0000000057C4 s_nop 0
0000000057C8 s_nop 0
0000000057CC s_nop 0
0000000057D0 s_nop 0
0000000057D4 s_nop 0
0000000057D8 s_nop 0
0000000057DC s_nop 0
0000000057E0 s_nop 0
0000000057E4 s_nop 0
0000000057E8 s_nop 0
0000000057EC s_nop 0
0000000057F0 s_nop 0
0000000057F4 s_nop 0
0000000057F8 s_nop 0
0000000057FC s_nop 0
000000005800 s_load_dword s3, s[0:1], 0x4c
000000005808 s_load_dword s4, s[0:1], 0x38
000000005810 s_waitcnt lgkmcnt(0)
000000005814 s_and_b32 s3, s3, 0xffff
00000000581C s_mul_i32 s2, s2, s3
000000005820 v_add_u32_e32 v0, s2, v0
000000005824 v_cmp_gt_i32_e32 vcc, s4, v0
000000005828 s_and_saveexec_b64 s[2:3], vcc
00000000582C s_cbranch_execz 109
000000005830 s_load_dwordx8 s[4:11], s[0:1], 0x0
000000005838 v_ashrrev_i32_e32 v1, 31, v0
00000000583C v_lshlrev_b64 v[0:1], 2, v[0:1]
000000005844 s_waitcnt lgkmcnt(0)
000000005848 v_lshl_add_u64 v[2:3], s[4:5], 0, v[0:1]
000000005850 v_lshl_add_u64 v[4:5], s[6:7], 0, v[0:1]
000000005858 global_load_dword v6, v[2:3], off
000000005860 global_load_dword v7, v[4:5], off
000000005868 v_lshl_add_u64 v[2:3], s[8:9], 0, v[0:1]
000000005870 global_load_dword v8, v[2:3], off
000000005878 v_lshl_add_u64 v[2:3], s[10:11], 0, v[0:1]
000000005880 global_load_dword v9, v[2:3], off
000000005888 s_load_dwordx8 s[4:11], s[0:1], 0x20
000000005890 s_movk_i32 s0, 0xff
000000005894 s_waitcnt lgkmcnt(0)
000000005898 v_lshl_add_u64 v[2:3], s[4:5], 0, v[0:1]
0000000058A0 v_lshl_add_u64 v[4:5], s[6:7], 0, v[0:1]
0000000058A8 v_lshl_add_u64 v[0:1], s[8:9], 0, v[0:1]
0000000058B0 s_waitcnt vmcnt(3)
0000000058B4 v_and_b32_sdwa v10, v6, s0 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_1 src1_sel:DWORD
0000000058BC s_waitcnt vmcnt(2)
0000000058C0 v_and_b32_sdwa v11, v7, s0 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_1 src1_sel:DWORD
0000000058C8 v_max_u16_sdwa v14, v6, v7 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:BYTE_0 src1_sel:BYTE_0
0000000058D0 s_waitcnt vmcnt(1)
0000000058D4 v_lshrrev_b32_e32 v12, 16, v8
0000000058D8 v_max_u16_sdwa v15, v6, v7 dst_sel:BYTE_1 dst_unused:UNUSED_PAD src0_sel:BYTE_1 src1_sel:BYTE_1
0000000058E0 s_waitcnt vmcnt(0)
0000000058E4 v_cmp_ne_u16_sdwa s[0:1], v8, v9 src0_sel:BYTE_3 src1_sel:BYTE_3
0000000058EC v_lshrrev_b32_e32 v13, 16, v9
0000000058F0 v_max_u16_sdwa v16, v6, v7 dst_sel:BYTE_1 dst_unused:UNUSED_PAD src0_sel:BYTE_3 src1_sel:BYTE_3
0000000058F8 v_cndmask_b32_e64 v21, 0, 1, s[0:1]
000000005900 v_cmp_ne_u16_sdwa s[0:1], v8, v9 src0_sel:BYTE_0 src1_sel:BYTE_0
000000005908 v_mul_lo_u16_e32 v17, v7, v6
00000000590C v_mul_lo_u16_sdwa v18, v7, v6 dst_sel:BYTE_1 dst_unused:UNUSED_PAD src0_sel:BYTE_1 src1_sel:BYTE_1
000000005914 v_cndmask_b32_e64 v22, 0, 1, s[0:1]
00000000591C v_cmp_ne_u16_sdwa s[0:1], v8, v9 src0_sel:BYTE_1 src1_sel:BYTE_1
000000005924 v_mul_lo_u16_sdwa v19, v7, v6 dst_sel:BYTE_1 dst_unused:UNUSED_PAD src0_sel:BYTE_3 src1_sel:BYTE_3
00000000592C v_mul_lo_u16_sdwa v6, v7, v6 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_1 src1_sel:WORD_1
000000005934 v_min_i16_sdwa v7, sext(v8), sext(v9) dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:BYTE_0 src1_sel:BYTE_0
00000000593C v_min_i16_sdwa v20, sext(v8), sext(v9) dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:BYTE_1 src1_sel:BYTE_1
000000005944 v_cndmask_b32_e64 v8, 0, 1, s[0:1]
00000000594C v_cmp_ne_u16_sdwa s[0:1], v12, v13 src0_sel:BYTE_0 src1_sel:BYTE_0
000000005954 v_or_b32_e32 v9, v14, v15
000000005958 v_max_u16_e32 v10, v10, v11
00000000595C v_or_b32_sdwa v11, v17, v18 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:BYTE_0 src1_sel:DWORD
000000005964 v_or_b32_sdwa v6, v6, v19 dst_sel:WORD_1 dst_unused:UNUSED_PAD src0_sel:BYTE_0 src1_sel:DWORD
00000000596C v_min_i16_sdwa v14, sext(v12), sext(v13) dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:BYTE_0 src1_sel:BYTE_0
000000005974 v_min_i16_sdwa v15, sext(v12), sext(v13) dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:BYTE_1 src1_sel:BYTE_1
00000000597C v_cndmask_b32_e64 v12, 0, 1, s[0:1]
000000005984 v_add_u16_sdwa v8, v20, v8 dst_sel:BYTE_1 dst_unused:UNUSED_PAD src0_sel:DWORD src1_sel:DWORD
00000000598C v_add_u16_e32 v7, v7, v22
000000005990 v_or_b32_sdwa v10, v10, v16 dst_sel:WORD_1 dst_unused:UNUSED_PAD src0_sel:DWORD src1_sel:DWORD
000000005998 v_or_b32_sdwa v6, v11, v6 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_0 src1_sel:DWORD
0000000059A0 v_or_b32_sdwa v7, v7, v8 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:BYTE_0 src1_sel:DWORD
0000000059A8 v_add_u16_sdwa v8, v15, v21 dst_sel:BYTE_1 dst_unused:UNUSED_PAD src0_sel:DWORD src1_sel:DWORD
0000000059B0 v_add_u16_e32 v11, v14, v12
0000000059B4 v_or_b32_sdwa v9, v9, v10 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_0 src1_sel:DWORD
0000000059BC v_or_b32_sdwa v8, v11, v8 dst_sel:WORD_1 dst_unused:UNUSED_PAD src0_sel:BYTE_0 src1_sel:DWORD
0000000059C4 global_store_dword v[2:3], v9, off
0000000059CC global_store_dword v[4:5], v6, off
0000000059D4 v_or_b32_sdwa v2, v7, v8 dst_sel:DWORD dst_unused:UNUSED_PAD src0_sel:WORD_0 src1_sel:DWORD
0000000059DC global_store_dword v[0:1], v2, off
0000000059E4 s_endpgm
0000000059E8 s_nop 0
0000000059EC s_nop 0
0000000059F0 s_nop 0
0000000059F4 s_nop 0
0000000059F8 s_nop 0
0000000059FC s_nop 0
000000005A00 s_nop 0
000000005A04 s_nop 0
000000005A08 s_nop 0
000000005A0C s_nop 0
000000005A10 s_nop 0
000000005A14 s_nop 0
000000005A18 s_nop 0
000000005A1C s_nop 0
000000005A20 s_nop 0
000000005A24 s_nop 0
000000005A28 s_nop 0
000000005A2C s_nop 0
000000005A30 s_nop 0
000000005A34 s_nop 0
000000005A38 s_nop 0
000000005A3C s_nop 0
000000005A40 s_nop 0
000000005A44 s_nop 0
000000005A48 s_nop 0
000000005A4C s_nop 0
000000005A50 s_nop 0
000000005A54 s_nop 0
000000005A58 s_nop 0
000000005A5C s_nop 0
000000005A60 s_nop 0
000000005A64 s_nop 0
000000005A68 s_nop 0
000000005A6C s_nop 0
000000005A70 s_nop 0
000000005A74 s_nop 0
000000005A78 s_nop 0
000000005A7C s_nop 0
000000005A80 s_nop 0
000000005A84 s_nop 0
000000005A88 s_nop 0
000000005A8C s_nop 0
000000005A90 s_nop 0
000000005A94 s_nop 0
000000005A98 s_nop 0
000000005A9C s_nop 0
000000005AA0 s_nop 0
000000005AA4 s_nop 0
000000005AA8 s_nop 0
000000005AAC s_nop 0
000000005AB0 s_nop 0
000000005AB4 s_nop 0
000000005AB8 s_nop 0
000000005ABC s_nop 0
000000005AC0 s_nop 0
000000005AC4 s_nop 0
000000005AC8 s_nop 0
000000005ACC s_nop 0
000000005AD0 s_nop 0
000000005AD4 s_nop 0
000000005AD8 s_nop 0
000000005ADC s_nop 0
000000005AE0 s_nop 0
000000005AE4 s_nop 0
000000005AE8 s_nop 0
000000005AEC s_nop 0
000000005AF0 s_nop 0
000000005AF4 s_nop 0
000000005AF8 s_nop 0
000000005AFC s_nop 0
000000005B00 s_nop 0
000000005B04 s_nop 0
000000005B08 s_nop 0
000000005B0C s_nop 0
000000005B10 s_nop 0
000000005B14 s_nop 0
000000005B18 s_nop 0
000000005B1C s_nop 0
000000005B20 s_nop 0
000000005B24 s_nop 0
000000005B28 s_nop 0
000000005B2C s_nop 0
000000005B30 s_nop 0
000000005B34 s_nop 0
000000005B38 s_nop 0
000000005B3C s_nop 0
000000005B40 s_nop 0
000000005B44 s_nop 0
000000005B48 s_nop 0
000000005B4C s_nop 0
000000005B50 s_nop 0
000000005B54 s_nop 0
000000005B58 s_nop 0
000000005B5C s_nop 0
000000005B60 s_nop 0
000000005B64 s_nop 0
000000005B68 s_nop 0
000000005B6C s_nop 0
000000005B70 s_nop 0
000000005B74 s_nop 0
000000005B78 s_nop 0
000000005B7C s_nop 0
000000005B80 s_nop 0
000000005B84 s_nop 0
000000005B88 s_nop 0
000000005B8C s_nop 0
000000005B90 s_nop 0
000000005B94 s_nop 0
000000005B98 s_nop 0
000000005B9C s_nop 0
000000005BA0 s_nop 0
000000005BA4 s_nop 0
000000005BA8 s_nop 0
000000005BAC s_nop 0
000000005BB0 s_nop 0
000000005BB4 s_nop 0
000000005BB8 s_nop 0
000000005BBC s_nop 0
000000005BC0 s_nop 0
000000005BC4 s_nop 0
000000005BC8 s_nop 0
000000005BCC s_nop 0
000000005BD0 s_nop 0
000000005BD4 s_nop 0
000000005BD8 s_nop 0
000000005BDC s_nop 0
000000005BE0 s_nop 0
000000005BE4 s_nop 0
000000005BE8 s_nop 0
000000005BEC s_nop 0
000000005BF0 s_nop 0
000000005BF4 s_nop 0
000000005BF8 s_nop 0
000000005BFC s_nop 0
000000005C00 s_nop 0
000000005C04 s_nop 0
000000005C08 s_nop 0
000000005C0C s_nop 0
000000005C10 s_nop 0
000000005C14 s_nop 0
000000005C18 s_nop 0
000000005C1C s_nop 0
000000005C20 s_nop 0
000000005C24 s_nop 0
000000005C28 s_nop 0
000000005C2C s_nop 0
000000005C30 s_nop 0
000000005C34 s_nop 0
000000005C38 s_nop 0
000000005C3C s_nop 0
000000005C40 s_nop 0
000000005C44 s_nop 0
000000005C48 s_nop 0
000000005C4C s_nop 0
000000005C50 s_nop 0
000000005C54 s_nop 0
000000005C58 s_nop 0
000000005C5C s_nop 0
000000005C60 s_nop 0
000000005C64 s_nop 0
000000005C68 s_nop 0
000000005C6C s_nop 0
000000005C70 s_nop 0
000000005C74 s_nop 0
000000005C78 s_nop 0
000000005C7C s_nop 0
000000005C80 s_nop 0
000000005C84 s_nop 0
000000005C88 s_nop 0
000000005C8C s_nop 0
000000005C90 s_nop 0
000000005C94 s_nop 0
000000005C98 s_nop 0
000000005C9C s_nop 0
000000005CA0 s_nop 0
000000005CA4 s_nop 0
000000005CA8 s_nop 0
000000005CAC s_nop 0
000000005CB0 s_nop 0
000000005CB4 s_nop 0
000000005CB8 s_nop 0
000000005CBC s_nop 0
000000005CC0 s_nop 0
000000005CC4 s_nop 0
000000005CC8 s_nop 0
000000005CCC s_nop 0
000000005CD0 s_nop 0
000000005CD4 s_nop 0
000000005CD8 s_nop 0
000000005CDC s_nop 0
000000005CE0 s_nop 0
000000005CE4 s_nop 0
000000005CE8 s_nop 0
000000005CEC s_nop 0
000000005CF0 s_nop 0
000000005CF4 s_nop 0
000000005CF8 s_nop 0
000000005CFC s_nop 0
000000005D00 s_nop 0
000000005D04 s_nop 0
000000005D08 s_nop 0
000000005D0C s_nop 0
000000005D10 s_nop 0
000000005D14 s_nop 0
000000005D18 s_nop 0
000000005D1C s_nop 0
000000005D20 s_nop 0
000000005D24 s_nop 0
000000005D28 s_nop 0
000000005D2C s_nop 0
000000005D30 s_nop 0
000000005D34 s_nop 0
000000005D38 s_nop 0
000000005D3C s_nop 0
000000005D40 s_nop 0
000000005D44 s_nop 0
000000005D48 s_nop 0
000000005D4C s_nop 0
000000005D50 s_nop 0
000000005D54 s_nop 0
000000005D58 s_nop 0
000000005D5C s_nop 0
000000005D60 s_nop 0
000000005D64 s_nop 0
000000005D68 s_nop 0
000000005D6C s_nop 0
000000005D70 s_nop 0
000000005D74 s_nop 0
000000005D78 s_nop 0
000000005D7C s_nop 0
000000005D80 s_nop 0
000000005D84 s_nop 0
000000005D88 s_nop 0
000000005D8C s_nop 0
000000005D90 s_nop 0
000000005D94 s_nop 0
000000005D98 s_nop 0
000000005D9C s_nop 0
000000005DA0 s_nop 0
000000005DA4 s_nop 0
000000005DA8 s_nop 0
000000005DAC s_nop 0
000000005DB0 s_nop 0
000000005DB4 s_nop 0
000000005DB8 s_nop 0
000000005DBC s_nop 0
000000005DC0 s_nop 0
000000005DC4 s_nop 0
000000005DC8 s_nop 0
000000005DCC s_nop 0
000000005DD0 s_nop 0
000000005DD4 s_nop 0
000000005DD8 s_nop 0
000000005DDC s_nop 0
000000005DE0 s_nop 0
000000005DE4 s_nop 0
000000005DE8 s_nop 0
000000005DEC s_nop 0
000000005DF0 s_nop 0
000000005DF4 s_nop 0
000000005DF8 s_nop 0
000000005DFC s_nop 0
