// raster.vert - the vertex shader of every raster draw (Note [Raster
// stores], raster.hpp): one triangle, (-1,-1) (3,-1) (-1,3), that covers
// the viewport, so each pixel of the render area is shaded once.
#version 460

void main() {
  const vec2 corner = vec2((gl_VertexIndex << 1) & 2, gl_VertexIndex & 2);
  gl_Position = vec4(corner * 2.0 - 1.0, 0.0, 1.0);
}
